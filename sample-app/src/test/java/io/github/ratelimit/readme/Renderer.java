package io.github.ratelimit.readme;

/**
 * The expensive downstream of the README's concurrency recipe: a report renderer.
 */
public interface Renderer {

	/**
	 * Renders a tenant's export.
	 * @param tenant the tenant
	 * @return the export
	 */
	byte[] render(String tenant);

}
