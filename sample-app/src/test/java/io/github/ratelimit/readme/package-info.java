/**
 * The examples of the README and of {@code docs/}, compiled by the build and checked
 * against those pages by {@link io.github.ratelimit.readme.DocsExamplesTests}: every Java
 * block is an excerpt of a file here (or of the autoconfigure and gateway modules' own
 * {@code readme} test packages). {@link io.github.ratelimit.readme.DocsTests} checks the
 * pages themselves. Outside the sample app's package, so its component scan does not pick
 * them up.
 */
@NullMarked
package io.github.ratelimit.readme;

import org.jspecify.annotations.NullMarked;
