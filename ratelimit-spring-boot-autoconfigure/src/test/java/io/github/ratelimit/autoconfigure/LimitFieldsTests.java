package io.github.ratelimit.autoconfigure;

import java.beans.PropertyDescriptor;
import java.lang.reflect.Method;
import java.lang.reflect.Parameter;
import java.lang.reflect.RecordComponent;
import java.util.Arrays;
import java.util.List;
import java.util.Set;

import org.junit.jupiter.api.Test;

import org.springframework.beans.BeanUtils;

import io.github.ratelimit.actuate.RateLimitsEndpoint;
import io.github.ratelimit.actuate.RateLimitsEndpointWebExtension;
import io.github.ratelimit.bucket.LimitSettings;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The settings of a limit are listed once ({@link LimitSettings#FIELDS}); what must name
 * each of them on its own (the record, the class properties bind to, the endpoint's write
 * operation, whose parameters actuator reads by name) names exactly those, so that a
 * setting added to one and not the others fails here rather than being dropped without a
 * word.
 */
class LimitFieldsTests {

	private static final Set<String> NOT_LIMIT_SETTINGS = Set.of("bucket", "index", "securityContext");

	@Test
	void theSettingsRecordHasOneComponentPerSetting() {
		assertThat(Arrays.stream(LimitSettings.class.getRecordComponents()).map(RecordComponent::getName))
			.containsExactlyInAnyOrderElementsOf(LimitSettings.FIELDS);
	}

	@Test
	void eachConfiguredLimitBindsEverySetting() {
		assertThat(Arrays.stream(BeanUtils.getPropertyDescriptors(RateLimitProperties.Limit.class))
			.filter((property) -> property.getWriteMethod() != null)
			.map(PropertyDescriptor::getName)).containsExactlyInAnyOrderElementsOf(LimitSettings.FIELDS);
		assertThat(RateLimitProperties.Rule.class.getSuperclass()).isEqualTo(RateLimitProperties.Limit.class);
		assertThat(RateLimitProperties.Bucket.class.getSuperclass()).isEqualTo(RateLimitProperties.Limit.class);
	}

	@Test
	void theEndpointsWriteOperationTakesEverySetting() {
		assertThat(settingParameters(RateLimitsEndpoint.class))
			.containsExactlyInAnyOrderElementsOf(LimitSettings.FIELDS);
		assertThat(settingParameters(RateLimitsEndpointWebExtension.class))
			.containsExactlyInAnyOrderElementsOf(LimitSettings.FIELDS);
	}

	private static List<String> settingParameters(Class<?> type) {
		Method setLimits = Arrays.stream(type.getMethods())
			.filter((method) -> method.getName().equals("setLimits"))
			.findFirst()
			.orElseThrow();
		return Arrays.stream(setLimits.getParameters())
			.map(Parameter::getName)
			.filter((name) -> !NOT_LIMIT_SETTINGS.contains(name))
			.toList();
	}

}
