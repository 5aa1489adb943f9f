/**
 * The README's WebFlux example, compiled with WebFlux on the class path and checked
 * against the README by the sample app's {@code ReadmeExamplesTests}.
 */
@NullMarked
package io.github.ratelimit.readme;

import org.jspecify.annotations.NullMarked;
