package io.github.ratelimit.gateway;

import java.util.List;

import com.tngtech.archunit.core.domain.JavaClasses;
import com.tngtech.archunit.core.importer.ClassFileImporter;
import com.tngtech.archunit.core.importer.ImportOption;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

import io.github.ratelimit.Decision;
import io.github.ratelimit.store.RateLimitStore;

import static com.tngtech.archunit.lang.syntax.ArchRuleDefinition.noClasses;
import static org.assertj.core.api.Assertions.assertThat;

/**
 * The package rules of the gateway module (see docs/design.md, Modules): the limiter is
 * an integration like the servlet filter, so it uses the request-stack-neutral
 * {@code web} package, never another integration; it takes permits only through the
 * {@link io.github.ratelimit.acquire.Acquirer}; only its {@code autoconfigure} package
 * uses Spring Boot's auto-configuration API.
 */
class GatewayModuleBoundariesTests {

	private static JavaClasses classes;

	@BeforeAll
	static void importMainClasses() {
		classes = new ClassFileImporter().withImportOption(ImportOption.Predefined.DO_NOT_INCLUDE_TESTS)
			.withImportOption(ImportOption.Predefined.DO_NOT_INCLUDE_JARS)
			.importPackages("io.github.ratelimit.gateway");
	}

	@Test
	void mainClassesOfTheModuleAreImported() {
		assertThat(classes.contain(BucketRateLimiter.class)).isTrue();
		assertThat(classes.contain("io.github.ratelimit.gateway.autoconfigure.RateLimitGatewayAutoConfiguration"))
			.isTrue();
		assertThat(classes.contain("io.github.ratelimit.autoconfigure.RateLimitAutoConfiguration")).isFalse();
	}

	@Test
	void theLimiterUsesNoOtherIntegration() {
		noClasses().that()
			.resideInAPackage("io.github.ratelimit.gateway")
			.should()
			.dependOnClassesThat()
			.resideInAnyPackage("io.github.ratelimit.redis..", "io.github.ratelimit.failover..",
					"io.github.ratelimit.aop..", "io.github.ratelimit.actuate..", "io.github.ratelimit.metrics..",
					"io.github.ratelimit.health..", "io.github.ratelimit.web.servlet..", "jakarta.servlet..")
			.allowEmptyShould(false)
			.check(classes);
	}

	@Test
	void onlyItsAutoconfigurePackageUsesSpringBootAutoConfiguration() {
		noClasses().that()
			.resideOutsideOfPackage("io.github.ratelimit.gateway.autoconfigure..")
			.should()
			.dependOnClassesThat()
			.resideInAPackage("org.springframework.boot.autoconfigure..")
			.allowEmptyShould(false)
			.check(classes);
	}

	@Test
	void theLimiterTakesPermitsOnlyThroughTheAcquirer() {
		noClasses().should()
			.callMethod(RateLimitStore.class, "decide", String.class, String.class, List.class, long.class, long.class)
			.orShould()
			.callMethod(RateLimitStore.class, "decide", String.class, String.class, List.class, long.class)
			.orShould()
			.callMethod(RateLimitStore.class, "decideAsync", String.class, String.class, List.class, long.class,
					long.class)
			.orShould()
			.callMethod(RateLimitStore.class, "refund", String.class, String.class, List.class, long.class)
			.orShould()
			.callMethod(RateLimitStore.class, "refund", String.class, String.class, List.class, long.class,
					Decision.class)
			.check(classes);
	}

}
