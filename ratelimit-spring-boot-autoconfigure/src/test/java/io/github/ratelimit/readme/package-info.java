/**
 * The README's WebFlux example, compiled with WebFlux on the class path and checked
 * against the README and docs by the sample app's {@code DocsExamplesTests}.
 */
@NullMarked
package io.github.ratelimit.readme;

import org.jspecify.annotations.NullMarked;
