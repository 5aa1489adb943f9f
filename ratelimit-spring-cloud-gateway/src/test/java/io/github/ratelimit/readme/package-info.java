/**
 * The README's gateway example, compiled with the gateway on the class path and checked
 * against the README and docs by the sample app's {@code DocsExamplesTests}.
 */
@NullMarked
package io.github.ratelimit.readme;

import org.jspecify.annotations.NullMarked;
