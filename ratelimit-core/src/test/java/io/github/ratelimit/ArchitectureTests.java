package io.github.ratelimit;

import com.tngtech.archunit.core.domain.JavaClass;
import com.tngtech.archunit.core.domain.JavaClasses;
import com.tngtech.archunit.core.importer.ClassFileImporter;
import com.tngtech.archunit.core.importer.ImportOption;
import com.tngtech.archunit.lang.ArchRule;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

import io.github.ratelimit.acquire.Acquirer;
import io.github.ratelimit.acquire.ManualWaiter;
import io.github.ratelimit.algorithm.LimitState;
import io.github.ratelimit.store.RateLimitStore;
import io.github.ratelimit.store.memory.InMemoryRateLimitStore;

import static com.tngtech.archunit.lang.syntax.ArchRuleDefinition.noClasses;
import static org.assertj.core.api.Assertions.assertThat;

/**
 * The dependency rules of the core module, checked on its main classes.
 */
class ArchitectureTests {

	private static final String CAFFEINE = "com.github.benmanes.caffeine..";

	private static JavaClasses classes;

	@BeforeAll
	static void importMainClasses() {
		classes = new ClassFileImporter().withImportOption(new ImportOption.DoNotIncludeTests())
			.importPackages("io.github.ratelimit");
	}

	@Test
	void onlyMainClassesAreImported() {
		assertThat(classes.contain(RateLimiter.class)).isTrue();
		assertThat(classes.contain(LimitState.class)).isTrue();
		assertThat(classes.contain(RateLimitStore.class)).isTrue();
		assertThat(classes.contain(InMemoryRateLimitStore.class)).isTrue();
		assertThat(classes.contain(Acquirer.class)).isTrue();
		assertThat(classes.contain(ManualWaiter.class)).as("test support is left out").isFalse();
		assertThat(classes.contain(ManualTimeSource.class)).as("test classes are left out").isFalse();
		assertThat(classes.contain(ArchitectureTests.class)).isFalse();
	}

	@Test
	void coreDoesNotDependOnSpring() {
		ArchRule rule = noClasses().that()
			.resideInAPackage("io.github.ratelimit..")
			.should()
			.dependOnClassesThat()
			.resideInAPackage("org.springframework..")
			.allowEmptyShould(false);
		rule.check(classes);
	}

	@Test
	void algorithmsDoNotDependOnStores() {
		ArchRule rule = noClasses().that()
			.resideInAPackage("io.github.ratelimit.algorithm..")
			.should()
			.dependOnClassesThat()
			.resideInAPackage("io.github.ratelimit.store..")
			.allowEmptyShould(false);
		rule.check(classes);
		assertThat(dependsOn(LimitState.class, Decision.class.getName()))
			.as("the algorithms' dependencies are seen (on Decision)")
			.isTrue();
	}

	@Test
	void acquisitionKnowsStoresOnlyThroughTheirInterface() {
		ArchRule rule = noClasses().that()
			.resideInAPackage("io.github.ratelimit.acquire..")
			.should()
			.dependOnClassesThat()
			.resideInAnyPackage("io.github.ratelimit.store.memory..", "io.github.ratelimit.algorithm..")
			.allowEmptyShould(false);
		rule.check(classes);
		assertThat(dependsOn(Acquirer.class, RateLimitStore.class.getName()))
			.as("the acquirer's dependencies are seen (on the store SPI)")
			.isTrue();
	}

	@Test
	void onlyTheMemoryStoreDependsOnCaffeine() {
		ArchRule rule = noClasses().that()
			.resideInAPackage("io.github.ratelimit..")
			.and()
			.resideOutsideOfPackage("io.github.ratelimit.store.memory..")
			.should()
			.dependOnClassesThat()
			.resideInAPackage(CAFFEINE)
			.allowEmptyShould(false);
		rule.check(classes);
		assertThat(dependsOn(InMemoryRateLimitStore.class, "com.github.benmanes.caffeine."))
			.as("the rule looks for the package the memory store really uses")
			.isTrue();
	}

	/**
	 * Returns whether {@code type} uses a class whose name starts with {@code prefix}.
	 */
	private static boolean dependsOn(Class<?> type, String prefix) {
		JavaClass javaClass = classes.get(type);
		return javaClass.getDirectDependenciesFromSelf()
			.stream()
			.anyMatch((dependency) -> dependency.getTargetClass().getName().startsWith(prefix));
	}

}
