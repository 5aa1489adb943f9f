package io.github.ratelimit.autoconfigure;

import java.util.List;

import com.tngtech.archunit.core.domain.JavaClass;
import com.tngtech.archunit.core.domain.JavaClasses;
import com.tngtech.archunit.core.importer.ClassFileImporter;
import com.tngtech.archunit.core.importer.ImportOption;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

import io.github.ratelimit.Decision;
import io.github.ratelimit.store.RateLimitStore;

import static com.tngtech.archunit.lang.syntax.ArchRuleDefinition.classes;
import static com.tngtech.archunit.lang.syntax.ArchRuleDefinition.noClasses;
import static org.assertj.core.api.Assertions.assertThat;

/**
 * The package rules (see docs/design.md, Modules): the integrations ({@code redis},
 * {@code web}, {@code aop}, {@code actuate}, {@code metrics}, {@code observation},
 * {@code failover}) never import each other and meet only in {@code autoconfigure}, the
 * only package that may use Spring Boot's auto-configuration API; the shared packages
 * depend on no integration; the request-stack-neutral parts of {@code web} and
 * {@code clientip} use no type of a request stack; the startup side of
 * {@code @RateLimited} does not depend on its per-call side.
 */
class ModuleBoundariesTests {

	private static final List<String> INTEGRATIONS = List.of("redis", "web", "aop", "actuate", "metrics", "observation",
			"failover", "health");

	private static JavaClasses classes;

	@BeforeAll
	static void importMainClasses() {
		classes = new ClassFileImporter().withImportOption(ImportOption.Predefined.DO_NOT_INCLUDE_TESTS)
			.importPackages("io.github.ratelimit");
	}

	@Test
	void mainClassesOfTheModuleAreImported() {
		assertThat(classes.contain("io.github.ratelimit.redis.RedisRateLimitStore")).isTrue();
		assertThat(classes.contain("io.github.ratelimit.autoconfigure.RateLimitAutoConfiguration")).isTrue();
	}

	@Test
	void integrationsDoNotImportEachOther() {
		for (String from : INTEGRATIONS) {
			for (String to : INTEGRATIONS) {
				if (!from.equals(to) && classes.containPackage("io.github.ratelimit." + from)) {
					noClasses().that()
						.resideInAPackage("io.github.ratelimit." + from + "..")
						.should()
						.dependOnClassesThat()
						.resideInAPackage("io.github.ratelimit." + to + "..")
						.check(classes);
				}
			}
		}
	}

	@Test
	void onlyTheLettucePathIsOfALettuceType() {
		classes().that()
			.resideInAPackage("io.github.ratelimit..")
			.and()
			.areAssignableTo(JavaClass.Predicates.resideInAPackage("io.lettuce.."))
			.should()
			.haveNameMatching("io\\.github\\.ratelimit\\.redis\\.(LettuceScriptRunner|ScriptCommand)(\\$.*)?")
			.because("the store checks for its own types on every client's path, and an application on Jedis "
					+ "has no Lettuce classes")
			.allowEmptyShould(false)
			.check(classes);
	}

	@Test
	void onlyAutoconfigureUsesSpringBootAutoConfiguration() {
		noClasses().that()
			.resideOutsideOfPackage("io.github.ratelimit.autoconfigure..")
			.should()
			.dependOnClassesThat()
			.resideInAPackage("org.springframework.boot.autoconfigure..")
			.allowEmptyShould(false)
			.check(classes);
	}

	@Test
	void theNeutralWebPackageUsesNoTypeOfARequestStack() {
		noClasses().that()
			.resideInAPackage("io.github.ratelimit.web")
			.should()
			.dependOnClassesThat()
			.resideInAnyPackage("jakarta.servlet..", "org.springframework.web.servlet..",
					"io.github.ratelimit.web.servlet..", "org.springframework.web.server..",
					"org.springframework.http.server.reactive..", "reactor..", "io.github.ratelimit.web.reactive..")
			.allowEmptyShould(false)
			.check(classes);
		assertThat(classes.get("io.github.ratelimit.web.servlet.RateLimitFilter")
			.getDirectDependenciesFromSelf()
			.stream()
			.anyMatch((dependency) -> dependency.getTargetClass().getPackageName().startsWith("jakarta.servlet")))
			.as("the rule looks for the package the servlet side really uses")
			.isTrue();
	}

	@Test
	void theClientIpIsWorkedOutWithoutATypeOfARequestStack() {
		noClasses().that()
			.resideInAPackage("io.github.ratelimit.clientip")
			.should()
			.dependOnClassesThat()
			.resideInAnyPackage("jakarta.servlet..", "org.springframework.web..", "org.springframework.http..",
					"reactor..", "io.github.ratelimit.clientip.servlet..", "io.github.ratelimit.clientip.reactive..")
			.allowEmptyShould(false)
			.check(classes);
		noClasses().that()
			.resideInAPackage("io.github.ratelimit.clientip.reactive..")
			.should()
			.dependOnClassesThat()
			.resideInAnyPackage("jakarta.servlet..", "io.github.ratelimit.clientip.servlet..")
			.allowEmptyShould(false)
			.check(classes);
		noClasses().that()
			.resideInAPackage("io.github.ratelimit.clientip.servlet..")
			.should()
			.dependOnClassesThat()
			.resideInAnyPackage("org.springframework.http.server.reactive..", "reactor..",
					"io.github.ratelimit.clientip.reactive..")
			.allowEmptyShould(false)
			.check(classes);
	}

	@Test
	void theServletAndTheReactiveStacksDoNotMeet() {
		noClasses().that()
			.resideInAPackage("io.github.ratelimit.web.reactive..")
			.should()
			.dependOnClassesThat()
			.resideInAnyPackage("jakarta.servlet..", "org.springframework.web.servlet..",
					"io.github.ratelimit.web.servlet..")
			.allowEmptyShould(false)
			.check(classes);
		noClasses().that()
			.resideInAPackage("io.github.ratelimit.web.servlet..")
			.should()
			.dependOnClassesThat()
			.resideInAnyPackage("org.springframework.web.server..", "io.github.ratelimit.web.reactive..")
			.allowEmptyShould(false)
			.check(classes);
		assertThat(classes.get("io.github.ratelimit.web.reactive.RateLimitWebFilter")
			.getDirectDependenciesFromSelf()
			.stream()
			.anyMatch((dependency) -> dependency.getTargetClass()
				.getPackageName()
				.equals("org.springframework.web.server")))
			.as("the rule looks for the package the reactive side really uses")
			.isTrue();
	}

	@Test
	void theStartupSideOfTheAnnotationDoesNotDependOnItsPerCallSide() {
		noClasses().that()
			.resideInAPackage("io.github.ratelimit.aop.operation..")
			.should()
			.dependOnClassesThat()
			.resideInAPackage("io.github.ratelimit.aop")
			.allowEmptyShould(false)
			.check(classes);
	}

	@Test
	void integrationsTakePermitsOnlyThroughTheAcquirer() {
		noClasses().that()
			.resideInAnyPackage("io.github.ratelimit.web..", "io.github.ratelimit.aop..",
					"io.github.ratelimit.bucket..")
			.should()
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

	@Test
	void theSharedPackagesDoNotDependOnIntegrations() {
		for (String shared : List.of("annotation", "bucket", "clientip", "expression", "status")) {
			noClasses().that()
				.resideInAPackage("io.github.ratelimit." + shared + "..")
				.should()
				.dependOnClassesThat()
				.resideInAnyPackage(
						INTEGRATIONS.stream().map((p) -> "io.github.ratelimit." + p + "..").toArray(String[]::new))
				.orShould()
				.dependOnClassesThat()
				.resideInAPackage("io.github.ratelimit.autoconfigure..")
				.allowEmptyShould(false)
				.check(classes);
		}
	}

}
