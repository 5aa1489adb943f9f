package io.github.ratelimit.autoconfigure;

import java.beans.PropertyDescriptor;
import java.lang.reflect.Method;
import java.lang.reflect.ParameterizedType;
import java.lang.reflect.Type;
import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.TreeSet;

import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import org.jspecify.annotations.Nullable;

import org.springframework.beans.BeanUtils;
import org.springframework.beans.factory.SmartInitializingSingleton;
import org.springframework.boot.context.properties.source.ConfigurationPropertyName;
import org.springframework.boot.context.properties.source.ConfigurationPropertyName.Form;
import org.springframework.boot.context.properties.source.ConfigurationPropertySource;
import org.springframework.boot.context.properties.source.ConfigurationPropertySources;
import org.springframework.boot.context.properties.source.IterableConfigurationPropertySource;
import org.springframework.core.env.Environment;

import io.github.ratelimit.expression.NearestNames;

/**
 * Warns at startup of each {@code ratelimit.*} key that names no setting, with the
 * setting it most likely meant: a misspelt key is otherwise ignored, and the limit it was
 * meant to set silently takes its default ({@code concurrent: 2} on a filter rule left
 * the rule a plain rate limit). A warning, not a failure: Spring Boot's own strict
 * binding would also refuse the elements of a list that a higher-precedence source (a
 * profile, the command line) replaced, which are not mistakes.
 * <p>
 * A key is checked by name against the properties of {@link RateLimitProperties} and its
 * nested types, through lists and maps, in Spring Boot's relaxed form ({@code
 * concurrency-lease}, {@code concurrencyLease} and {@code CONCURRENCY_LEASE} are one).
 */
final class UnknownPropertiesWarning implements SmartInitializingSingleton {

	private static final Log logger = LogFactory.getLog(UnknownPropertiesWarning.class);

	private static final ConfigurationPropertyName PREFIX = ConfigurationPropertyName.of("ratelimit");

	private final Environment environment;

	UnknownPropertiesWarning(Environment environment) {
		this.environment = environment;
	}

	@Override
	public void afterSingletonsInstantiated() {
		for (String message : messages()) {
			logger.warn(message);
		}
	}

	/**
	 * Returns one warning per unknown key, in key order.
	 * @return the warnings, empty when every key names a setting
	 */
	List<String> messages() {
		TreeSet<String> unknown = new TreeSet<>();
		for (ConfigurationPropertySource source : ConfigurationPropertySources.get(this.environment)) {
			if (source instanceof IterableConfigurationPropertySource iterable) {
				iterable.filter(PREFIX::isAncestorOf).stream().forEach((name) -> {
					String message = check(name, RateLimitProperties.class, 1);
					if (message != null) {
						unknown.add(message);
					}
				});
			}
		}
		return new ArrayList<>(unknown);
	}

	/**
	 * Checks the elements of {@code name} from {@code index} on against {@code type}.
	 * @return the warning, or {@code null} when the name is a setting (or within one)
	 */
	private static @Nullable String check(ConfigurationPropertyName name, Class<?> type, int index) {
		if (index >= name.getNumberOfElements() || !nested(type)) {
			return null;
		}
		String element = name.getElement(index, Form.UNIFORM);
		PropertyDescriptor property = null;
		List<String> known = new ArrayList<>();
		for (PropertyDescriptor candidate : BeanUtils.getPropertyDescriptors(type)) {
			Method accessor = (candidate.getReadMethod() != null) ? candidate.getReadMethod()
					: candidate.getWriteMethod();
			if (accessor == null || accessor.getDeclaringClass() == Object.class) {
				continue;
			}
			known.add(candidate.getName());
			if (uniform(candidate.getName()).equals(element)) {
				property = candidate;
			}
		}
		if (property == null) {
			String key = name.chop(index + 1).toString();
			List<String> nearest = NearestNames.of(element, known);
			String meant = nearest.isEmpty() ? null : nearest.get(0);
			return "Unknown property " + key + " ignored: " + type.getSimpleName() + " has no setting '"
					+ name.getElement(index, Form.ORIGINAL) + "'"
					+ ((meant != null) ? "; did you mean " + name.chop(index) + "." + dashed(meant) + "?" : "")
					+ " (docs/configuration.md lists every setting)";
		}
		Type valueType = (property.getReadMethod() != null) ? property.getReadMethod().getGenericReturnType()
				: property.getWriteMethod().getGenericParameterTypes()[0];
		Class<?> raw = property.getPropertyType();
		if (Collection.class.isAssignableFrom(raw) && valueType instanceof ParameterizedType generic) {
			// The next element is the index.
			return check(name, element(generic, 0), index + 2);
		}
		if (Map.class.isAssignableFrom(raw) && valueType instanceof ParameterizedType generic) {
			// The next element is the key, any name.
			return check(name, element(generic, 1), index + 2);
		}
		return check(name, raw, index + 1);
	}

	/**
	 * Whether a type is one of the starter's nested settings, whose names are checked.
	 */
	private static boolean nested(Class<?> type) {
		return !type.isEnum() && type.getName().startsWith(RateLimitProperties.class.getName());
	}

	private static Class<?> element(ParameterizedType type, int argument) {
		Type element = type.getActualTypeArguments()[argument];
		return (element instanceof Class<?> clazz) ? clazz : Object.class;
	}

	private static String uniform(String javaName) {
		return javaName.toLowerCase(Locale.ROOT);
	}

	private static String dashed(String javaName) {
		return javaName.replaceAll("([a-z0-9])([A-Z])", "$1-$2").toLowerCase(Locale.ROOT);
	}

}
