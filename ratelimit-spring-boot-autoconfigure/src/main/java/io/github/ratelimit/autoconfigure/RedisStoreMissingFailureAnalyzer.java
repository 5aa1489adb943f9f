package io.github.ratelimit.autoconfigure;

import java.util.Arrays;
import java.util.Locale;

import org.jspecify.annotations.Nullable;

import org.springframework.beans.factory.BeanFactory;
import org.springframework.beans.factory.ListableBeanFactory;
import org.springframework.beans.factory.NoSuchBeanDefinitionException;
import org.springframework.beans.factory.config.ConfigurableBeanFactory;
import org.springframework.boot.diagnostics.AbstractFailureAnalyzer;
import org.springframework.boot.diagnostics.FailureAnalysis;
import org.springframework.core.Ordered;
import org.springframework.core.annotation.Order;
import org.springframework.core.env.Environment;
import org.springframework.util.ClassUtils;

import io.github.ratelimit.store.RateLimitStore;

/**
 * Explains a startup that failed for want of a {@link RateLimitStore} when
 * {@code ratelimit.store=redis}: what is missing for the Redis store (Spring Data Redis,
 * a single {@code RedisConnectionFactory}, of any client) and how to fix it. Other
 * missing beans are left to Spring Boot's own analysis.
 */
@Order(Ordered.HIGHEST_PRECEDENCE)
class RedisStoreMissingFailureAnalyzer extends AbstractFailureAnalyzer<NoSuchBeanDefinitionException> {

	private static final String CONNECTION_FACTORY = "org.springframework.data.redis.connection.RedisConnectionFactory";

	private final BeanFactory beanFactory;

	private final Environment environment;

	RedisStoreMissingFailureAnalyzer(BeanFactory beanFactory, Environment environment) {
		this.beanFactory = beanFactory;
		this.environment = environment;
	}

	@Override
	protected @Nullable FailureAnalysis analyze(Throwable rootFailure, NoSuchBeanDefinitionException cause) {
		if (!RateLimitStore.class.equals(cause.getBeanType())) {
			return null;
		}
		String store = this.environment.getProperty("ratelimit.store", "auto");
		if (!store.trim().toLowerCase(Locale.ROOT).equals("redis")) {
			return null;
		}
		String description = "ratelimit.store is 'redis' but the application has no Redis rate limit store: ";
		ClassLoader classLoader = classLoader();
		if (!ClassUtils.isPresent(CONNECTION_FACTORY, classLoader)) {
			return new FailureAnalysis(description + "Spring Data Redis is not on the class path.",
					"Add spring-boot-starter-data-redis and set spring.data.redis.host and spring.data.redis.port, "
							+ "or set ratelimit.store=memory.",
					cause);
		}
		String[] factories = connectionFactories(classLoader);
		if (factories.length > 1) {
			return new FailureAnalysis(
					description + "there are " + factories.length + " RedisConnectionFactory beans "
							+ Arrays.toString(factories) + " and it cannot tell which one to use.",
					"Mark the RedisConnectionFactory the rate limits should use @Primary, "
							+ "or define your own RateLimitStore bean.",
					cause);
		}
		return new FailureAnalysis(description + "there is no RedisConnectionFactory bean.",
				"Set spring.data.redis.host and spring.data.redis.port (with Spring Boot's Redis auto-configuration "
						+ "enabled) or define a RedisConnectionFactory bean, or set ratelimit.store=memory.",
				cause);
	}

	private ClassLoader classLoader() {
		ClassLoader classLoader = (this.beanFactory instanceof ConfigurableBeanFactory configurable)
				? configurable.getBeanClassLoader() : null;
		return (classLoader != null) ? classLoader : getClass().getClassLoader();
	}

	private String[] connectionFactories(ClassLoader classLoader) {
		if (!(this.beanFactory instanceof ListableBeanFactory listable)) {
			return new String[0];
		}
		try {
			return listable.getBeanNamesForType(ClassUtils.forName(CONNECTION_FACTORY, classLoader));
		}
		catch (ClassNotFoundException | LinkageError ex) {
			return new String[0];
		}
	}

}
