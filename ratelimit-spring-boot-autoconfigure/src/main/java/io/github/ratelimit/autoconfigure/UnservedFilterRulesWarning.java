package io.github.ratelimit.autoconfigure;

import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import org.jspecify.annotations.Nullable;

import org.springframework.beans.factory.ListableBeanFactory;
import org.springframework.beans.factory.SmartInitializingSingleton;

/**
 * Warns at startup when {@code ratelimit.filter.rules} are configured but no filter
 * applies them: the application serves neither Spring MVC nor WebFlux requests (a
 * command-line or messaging application, or a web stack the starter does not know). The
 * rules would otherwise be ignored without a word, and a limit someone counts on would
 * not exist. A warning, not a failure: configuration shared by several applications may
 * carry rules for the web ones.
 */
final class UnservedFilterRulesWarning implements SmartInitializingSingleton {

	/** The bean of the servlet filter's registration. */
	static final String SERVLET_FILTER = "rateLimitFilterRegistration";

	/** The bean of the reactive web filter. */
	static final String REACTIVE_FILTER = "rateLimitWebFilter";

	private static final Log logger = LogFactory.getLog(UnservedFilterRulesWarning.class);

	private final RateLimitProperties properties;

	private final ListableBeanFactory beanFactory;

	UnservedFilterRulesWarning(RateLimitProperties properties, ListableBeanFactory beanFactory) {
		this.properties = properties;
		this.beanFactory = beanFactory;
	}

	@Override
	public void afterSingletonsInstantiated() {
		String message = message();
		if (message != null) {
			logger.warn(message);
		}
	}

	/**
	 * Returns the warning, or {@code null} when the rules are applied or there are none.
	 * @return the warning
	 */
	@Nullable String message() {
		RateLimitProperties.Filter filter = this.properties.getFilter();
		int rules = filter.getRules().size();
		if (rules == 0 || !filter.isEnabled() || this.beanFactory.containsBean(SERVLET_FILTER)
				|| this.beanFactory.containsBean(REACTIVE_FILTER)) {
			return null;
		}
		return "ratelimit.filter.rules has " + rules + ((rules == 1) ? " rule" : " rules")
				+ " but nothing applies them: the application serves neither Spring MVC (servlet) nor WebFlux "
				+ "requests, so no rate limit filter is registered and these limits do not exist. Add "
				+ "spring-boot-starter-webmvc or spring-boot-starter-webflux if the application serves HTTP; "
				+ "otherwise remove the rules, or set ratelimit.filter.enabled=false where they do not apply.";
	}

}
