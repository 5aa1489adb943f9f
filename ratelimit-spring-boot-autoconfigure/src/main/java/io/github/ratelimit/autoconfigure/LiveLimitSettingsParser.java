package io.github.ratelimit.autoconfigure;

import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import org.springframework.boot.context.properties.bind.BindException;
import org.springframework.boot.context.properties.bind.Bindable;
import org.springframework.boot.context.properties.bind.Binder;
import org.springframework.boot.context.properties.source.ConfigurationProperty;
import org.springframework.boot.context.properties.source.MapConfigurationPropertySource;

import io.github.ratelimit.Algorithm;
import io.github.ratelimit.bucket.BucketSettings;
import io.github.ratelimit.bucket.LimitSettings;
import io.github.ratelimit.bucket.LimitSettingsParser;
import io.github.ratelimit.bucket.LiveLimits;

/**
 * Reads a live override with Spring Boot's binder into the class that each limit of
 * {@code ratelimit.buckets.<name>} binds to, then maps it as configuration is mapped: the
 * same names, conversions and checks (the bucket registry checks the limits themselves).
 * {@code limits[i].<setting>} changes the limit at index {@code i} of a bucket that has
 * several, leaving the others as they are.
 */
final class LiveLimitSettingsParser implements LimitSettingsParser {

	private static final String ROOT = "override";

	private static final String LIMIT_FIELDS = "(" + String.join("|", LimitSettings.FIELDS) + ")";

	private static final Pattern KNOWN = Pattern.compile(LIMIT_FIELDS + "|limits\\[(\\d{1,3})\\]\\." + LIMIT_FIELDS);

	@Override
	public BucketSettings parse(String bucket, Map<String, String> fields) {
		String prefix = "ratelimit.buckets." + bucket + ".";
		Map<String, String> single = new LinkedHashMap<>();
		Map<Integer, Map<String, String>> entries = new TreeMap<>();
		fields.forEach((name, value) -> {
			Matcher matcher = KNOWN.matcher(name);
			if (!matcher.matches()) {
				throw new IllegalArgumentException(prefix + name + ": not a limit setting; use "
						+ LiveLimits.fieldList() + " (and 'index' for one of several limits)");
			}
			if (matcher.group(1) != null) {
				single.put(matcher.group(1), value);
			}
			else {
				entries.computeIfAbsent(Integer.valueOf(matcher.group(2)), (index) -> new LinkedHashMap<>())
					.put(matcher.group(3), value);
			}
		});
		List<LimitSettings> limits = new ArrayList<>();
		entries.forEach((index, entry) -> {
			while (limits.size() < index) {
				limits.add(LimitSettings.NONE);
			}
			limits.add(bind(prefix + "limits[" + index + "].", entry));
		});
		return new BucketSettings(bind(prefix, single), limits, null);
	}

	/**
	 * Binds one limit's settings as configuration binds them: the class that
	 * {@code ratelimit.buckets.<name>} binds to, Spring Boot's conversions.
	 */
	private static LimitSettings bind(String prefix, Map<String, String> fields) {
		Map<String, String> source = new LinkedHashMap<>();
		fields.forEach((name, value) -> source.put(ROOT + "." + name, value));
		Binder binder = new Binder(new MapConfigurationPropertySource(source));
		try {
			return RateLimitSettingsMapper
				.limit(binder.bindOrCreate(ROOT, Bindable.of(RateLimitProperties.Limit.class)));
		}
		catch (BindException ex) {
			ConfigurationProperty property = ex.getProperty();
			if (property == null) {
				throw new IllegalArgumentException(prefix + "*: " + ex.getMessage(), ex);
			}
			String name = property.getName().toString().substring(ROOT.length() + 1);
			throw new IllegalArgumentException(
					prefix + name + ": must be " + expected(ex) + " but was '" + property.getValue() + "'", ex);
		}
	}

	private static String expected(BindException ex) {
		Class<?> type = ex.getTarget().getType().resolve(Object.class);
		if (type == Duration.class) {
			return "a duration, e.g. 500ms, 10s, 1m or PT1M";
		}
		if (type == Algorithm.class) {
			return "one of " + Arrays.stream(Algorithm.values()).map(Algorithm::propertyValue).toList();
		}
		return "a whole number";
	}

}
