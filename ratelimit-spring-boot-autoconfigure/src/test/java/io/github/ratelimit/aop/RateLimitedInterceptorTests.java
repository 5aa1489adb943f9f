package io.github.ratelimit.aop;

import java.time.Duration;
import java.util.List;
import java.util.Map;

import org.jspecify.annotations.Nullable;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

import org.springframework.aop.support.AopUtils;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.test.context.assertj.AssertableApplicationContext;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.mock.web.MockHttpServletRequest;
import org.springframework.scheduling.annotation.Scheduled;
import org.springframework.security.authentication.UsernamePasswordAuthenticationToken;
import org.springframework.security.core.context.SecurityContextHolder;
import org.springframework.web.context.request.RequestContextHolder;
import org.springframework.web.context.request.ServletRequestAttributes;

import io.github.ratelimit.Algorithm;
import io.github.ratelimit.ManualTimeSource;
import io.github.ratelimit.RateLimitExceededException;
import io.github.ratelimit.acquire.LimitMode;
import io.github.ratelimit.acquire.ManualWaiter;
import io.github.ratelimit.acquire.Outcome;
import io.github.ratelimit.acquire.RateLimitResult;
import io.github.ratelimit.acquire.RecordingObserver;
import io.github.ratelimit.annotation.OnLimit;
import io.github.ratelimit.annotation.RateLimited;
import io.github.ratelimit.autoconfigure.RateLimitAopAutoConfiguration;
import io.github.ratelimit.autoconfigure.RateLimitAutoConfiguration;
import io.github.ratelimit.bucket.BucketDefinition;
import io.github.ratelimit.bucket.BucketRegistry;
import io.github.ratelimit.bucket.BucketSettings;
import io.github.ratelimit.bucket.LimitSettings;
import io.github.ratelimit.expression.RateLimitExpressions.InvalidExpressionException;
import io.github.ratelimit.store.memory.InMemoryRateLimitStore;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatExceptionOfType;
import static org.assertj.core.api.Assertions.assertThatIllegalArgumentException;
import static org.assertj.core.api.Assertions.assertThatIllegalStateException;

/**
 * The {@code @RateLimited} semantics of blocking methods, through real proxies made by
 * the auto-configuration, on a manual clock.
 */
class RateLimitedInterceptorTests {

	private final ApplicationContextRunner runner = new ApplicationContextRunner()
		.withConfiguration(AutoConfigurations.of(RateLimitAutoConfiguration.class, RateLimitAopAutoConfiguration.class))
		.withUserConfiguration(ManualTimeConfiguration.class)
		.withBean("plans", Plans.class)
		.withBean(Greeter.class);

	@AfterEach
	void clearThreadState() {
		SecurityContextHolder.clearContext();
		RequestContextHolder.resetRequestAttributes();
	}

	@Test
	void limitReachedShouldThrowWithTheDecision() {
		run((context) -> {
			Greeter greeter = context.getBean(Greeter.class);
			assertThat(AopUtils.isAopProxy(greeter)).isTrue();
			for (int i = 0; i < 3; i++) {
				assertThat(greeter.greet("ann")).isEqualTo("hi ann");
			}
			assertThatExceptionOfType(RateLimitExceededException.class).isThrownBy(() -> greeter.greet("ann"))
				.satisfies((ex) -> {
					assertThat(ex.getBucket()).isEqualTo("greet");
					assertThat(ex.getDecision().allowed()).isFalse();
					assertThat(ex.getDecision().limit()).isEqualTo(3);
					assertThat(ex.getDecision().retryAfter()).isPositive().isLessThanOrEqualTo(Duration.ofSeconds(20));
				});
			assertThat(greeter.calls()).isEqualTo(3);
		});
	}

	@Test
	void keyShouldLimitEachArgumentValueOnItsOwn() {
		run((context) -> {
			Greeter greeter = context.getBean(Greeter.class);
			greeter.perName("ann");
			greeter.perName("ann");
			assertThatExceptionOfType(RateLimitExceededException.class).isThrownBy(() -> greeter.perName("ann"));
			assertThat(greeter.perName("bob")).isEqualTo("hi bob");
			assertThat(observer(context).last().key()).isEqualTo("bob");
		});
	}

	@Test
	void expressionsShouldSeeArgumentsMethodTargetAndBeans() {
		run((context) -> {
			Greeter greeter = context.getBean(Greeter.class);
			greeter.variables("ann", 7);
			assertThat(observer(context).last().key()).isEqualTo("variables|ann|7|2|ann|hello|premium");
		});
	}

	@Test
	void principalShouldBeTheSpringSecurityAuthentication() {
		run((context) -> {
			Greeter greeter = context.getBean(Greeter.class);
			SecurityContextHolder.getContext()
				.setAuthentication(UsernamePasswordAuthenticationToken.authenticated("alice", "n/a", List.of()));
			greeter.whoAmI();
			assertThat(observer(context).last().key()).isEqualTo("alice");
			assertThatExceptionOfType(RateLimitExceededException.class).isThrownBy(greeter::whoAmI);
		});
	}

	@Test
	void principalShouldFallBackToTheRequestPrincipalAndRequestShouldBeAvailable() {
		run((context) -> {
			Greeter greeter = context.getBean(Greeter.class);
			MockHttpServletRequest request = new MockHttpServletRequest();
			request.setRemoteAddr("203.0.113.9");
			request.setUserPrincipal(() -> "bob");
			RequestContextHolder.setRequestAttributes(new ServletRequestAttributes(request));
			greeter.whoAmI();
			assertThat(observer(context).last().key()).isEqualTo("bob");
			greeter.fromRequest();
			assertThat(observer(context).last().key()).isEqualTo("203.0.113.9");
		});
	}

	@Test
	void clientIpShouldBeTheConnectionsAddressWhenNoProxyIsTrusted() {
		run((context) -> {
			Greeter greeter = context.getBean(Greeter.class);
			int admitted = 0;
			for (int i = 1; i <= 30; i++) {
				MockHttpServletRequest request = new MockHttpServletRequest();
				request.setRemoteAddr("203.0.113.9");
				request.addHeader("X-Forwarded-For", "198.51.100." + i);
				RequestContextHolder.setRequestAttributes(new ServletRequestAttributes(request));
				try {
					greeter.fromClient();
					admitted++;
				}
				catch (RateLimitExceededException ex) {
					assertThat(ex.getBucket()).isEqualTo("clientIp");
				}
			}
			assertThat(admitted).isEqualTo(10);
			assertThat(observer(context).last().key()).isEqualTo("203.0.113.9");
		});
	}

	@Test
	void clientIpShouldBeWorkedOutPastTheTrustedProxies() {
		ApplicationContextRunner trusting = this.runner
			.withPropertyValues("ratelimit.client-ip.trusted-proxies=10.0.0.0/8")
			.withBean(BucketRegistry.class, () -> new BucketRegistry(LimitSettings.NONE, Map.of()));
		trusting.run((context) -> {
			Greeter greeter = context.getBean(Greeter.class);
			MockHttpServletRequest request = new MockHttpServletRequest();
			request.setRemoteAddr("10.0.0.1");
			request.addHeader("X-Forwarded-For", "192.0.2.1, 198.51.100.7, 10.0.0.2");
			RequestContextHolder.setRequestAttributes(new ServletRequestAttributes(request));
			greeter.fromClient();
			assertThat(observer(context).last().key()).isEqualTo("198.51.100.7");
			// An argument of that name keeps its own value.
			greeter.clientIpArgument("an argument");
			assertThat(observer(context).last().key()).isEqualTo("an argument");
		});
	}

	@Test
	void skipWhenTrueShouldLeaveTheCallUnlimited() {
		run((context) -> {
			Greeter greeter = context.getBean(Greeter.class);
			for (int i = 0; i < 5; i++) {
				greeter.unlessAdmin("admin");
			}
			greeter.unlessAdmin("ann");
			assertThatExceptionOfType(RateLimitExceededException.class).isThrownBy(() -> greeter.unlessAdmin("ann"));
		});
	}

	@Test
	void costExpressionShouldTakeThatManyPermits() {
		run((context) -> {
			Greeter greeter = context.getBean(Greeter.class);
			greeter.order(List.of("a", "b", "c"));
			greeter.order(List.of("a", "b", "c"));
			greeter.order(List.of("a", "b", "c"));
			assertThat(observer(context).last().decision().remaining()).isEqualTo(1);
			assertThatExceptionOfType(RateLimitExceededException.class)
				.isThrownBy(() -> greeter.order(List.of("a", "b")));
			greeter.order(List.of("a"));
		});
	}

	@Test
	void costAboveCapacityShouldBeRejectedAsNeverRetryable() {
		run((context) -> {
			Greeter greeter = context.getBean(Greeter.class);
			List<String> eleven = List.of("1", "2", "3", "4", "5", "6", "7", "8", "9", "10", "11");
			assertThatExceptionOfType(RateLimitExceededException.class).isThrownBy(() -> greeter.order(eleven))
				.satisfies((ex) -> assertThat(ex.getDecision().retryable()).isFalse());
			greeter.order(List.of("a"));
		});
	}

	@Test
	void costThatIsNotAWholeNumberOfAtLeastOneShouldBeAClearError() {
		run((context) -> {
			Greeter greeter = context.getBean(Greeter.class);
			assertThatIllegalArgumentException().isThrownBy(() -> greeter.weighed(0))
				.withMessageContaining("@RateLimited(cost) on RateLimitedInterceptorTests.Greeter.weighed(Object)")
				.withMessageContaining("'#weight'")
				.withMessageContaining("but was 0 (Integer)");
			assertThatIllegalArgumentException().isThrownBy(() -> greeter.weighed(1.5))
				.withMessageContaining("but was 1.5 (Double)");
			assertThatIllegalArgumentException().isThrownBy(() -> greeter.weighed("many"))
				.withMessageContaining("but was 'many' (String)");
			assertThat(greeter.weighed("2")).isEqualTo("weighed 2");
			assertThat(greeter.weighed(3.0)).isEqualTo("weighed 3.0");
			assertThat(observer(context).results()).hasSize(2);
		});
	}

	@Test
	void limitExpressionShouldSetTheLimitPerCall() {
		run((context) -> {
			Greeter greeter = context.getBean(Greeter.class);
			for (int i = 0; i < 5; i++) {
				greeter.api("premium");
			}
			assertThatExceptionOfType(RateLimitExceededException.class).isThrownBy(() -> greeter.api("premium"))
				.satisfies((ex) -> assertThat(ex.getDecision().limit()).isEqualTo(5));
			greeter.api("free");
			greeter.api("free");
			assertThatExceptionOfType(RateLimitExceededException.class).isThrownBy(() -> greeter.api("free"))
				.satisfies((ex) -> assertThat(ex.getDecision().limit()).isEqualTo(2));
		});
	}

	@Test
	void limitExpressionOfZeroNegativeOrNullShouldBeAClearError() {
		run((context) -> {
			Greeter greeter = context.getBean(Greeter.class);
			assertThatIllegalArgumentException().isThrownBy(() -> greeter.api("zero"))
				.withMessageContaining(
						"@RateLimited(limitExpression) on RateLimitedInterceptorTests.Greeter.api(String)")
				.withMessageContaining("'@plans.limitFor(#apiKey)'")
				.withMessageContaining("must be positive but was 0");
			assertThatIllegalArgumentException().isThrownBy(() -> greeter.api("negative"))
				.withMessageContaining("must be positive but was -3");
			assertThatIllegalArgumentException().isThrownBy(() -> greeter.api("unknown"))
				.withMessageContaining("but was null");
			assertThat(greeter.calls()).isZero();
		});
	}

	@Test
	void waitShouldSucceedOnceAPermitIsFree() {
		run((context) -> {
			Greeter greeter = context.getBean(Greeter.class);
			ManualWaiter waiter = context.getBean(ManualWaiter.class);
			greeter.patient();
			assertThat(greeter.patient()).isEqualTo("done");
			assertThat(waiter.sleeps()).containsExactly(1_000_000L);
			assertThat(greeter.calls()).isEqualTo(2);
			assertThat(observer(context).outcomes()).as("a call that waited is not a rejection")
				.containsExactly(Outcome.ALLOWED, Outcome.WAITED);
		});
	}

	@Test
	void waitShouldRejectWhenThePermitWouldComeAfterMaxWait() {
		run((context) -> {
			Greeter greeter = context.getBean(Greeter.class);
			ManualWaiter waiter = context.getBean(ManualWaiter.class);
			greeter.impatient();
			assertThatExceptionOfType(RateLimitExceededException.class).isThrownBy(greeter::impatient);
			assertThat(waiter.sleeps()).as("no wait that cannot succeed").isEmpty();
		});
	}

	@Test
	void waitShouldRejectWhenAnotherCallerTookThePermitAndMaxWaitIsUsedUp() {
		run((context) -> {
			Greeter greeter = context.getBean(Greeter.class);
			ManualWaiter waiter = context.getBean(ManualWaiter.class);
			InMemoryRateLimitStore store = context.getBean(InMemoryRateLimitStore.class);
			BucketDefinition bucket = context.getBean(BucketRegistry.class).find("halfPatient");
			greeter.halfPatient();
			// Another instance takes the permit while this call waits for it.
			waiter.onSleep(() -> store.decide("halfPatient", "", bucket.limits(), 1));
			assertThatExceptionOfType(RateLimitExceededException.class).isThrownBy(greeter::halfPatient);
			assertThat(waiter.sleeps()).containsExactly(1_000_000L);
			assertThat(greeter.calls()).isEqualTo(1);
		});
	}

	@Test
	void fallbackMethodShouldBeCalledInsteadOfThrowing() {
		run((context) -> {
			Greeter greeter = context.getBean(Greeter.class);
			assertThat(greeter.quote("ACME")).isEqualTo("live ACME");
			assertThat(greeter.quote("ACME")).isEqualTo("cached ACME");
		});
	}

	@Test
	void fallbackMethodShouldReceiveTheRejectionWhenItTakesIt() {
		run((context) -> {
			Greeter greeter = context.getBean(Greeter.class);
			assertThat(greeter.quoteWithReason("ACME")).isEqualTo("live ACME");
			assertThat(greeter.quoteWithReason("ACME")).isEqualTo("busy quoteWithReason: retry in 60s");
		});
	}

	@Test
	void refundWhenShouldCountOnlyFailedLogins() {
		run((context) -> {
			LoginService login = context.getBean(LoginService.class);
			for (int i = 0; i < 20; i++) {
				assertThat(login.login("alice", "secret")).isEqualTo("session-alice");
			}
			for (int i = 0; i < 5; i++) {
				assertThatIllegalArgumentException().isThrownBy(() -> login.login("alice", "guess"))
					.withMessage("Bad credentials");
			}
			assertThatExceptionOfType(RateLimitExceededException.class)
				.isThrownBy(() -> login.login("alice", "secret"));
			assertThat(login.login("bob", "secret")).isEqualTo("session-bob");
		}, LoginService.class);
	}

	@Test
	void penaltyShouldShutAUsernameOutOnceItIsRejected() {
		run((context) -> {
			LoginService login = context.getBean(LoginService.class);
			ManualTimeSource clock = context.getBean(ManualTimeSource.class);
			for (int i = 0; i < 3; i++) {
				assertThatIllegalArgumentException().isThrownBy(() -> login.guarded("alice", "guess"));
			}
			assertThatExceptionOfType(RateLimitExceededException.class)
				.isThrownBy(() -> login.guarded("alice", "secret"))
				.satisfies((ex) -> assertThat(ex.getDecision().retryAfter()).isEqualTo(Duration.ofMinutes(15)));
			// The window (1m) is long over, the 15 minutes are not: still shut out.
			clock.advanceMicros(Duration.ofMinutes(14).toNanos() / 1000);
			assertThatExceptionOfType(RateLimitExceededException.class)
				.isThrownBy(() -> login.guarded("alice", "secret"))
				.satisfies((ex) -> assertThat(ex.getDecision().retryAfter()).isEqualTo(Duration.ofMinutes(1)));
			assertThat(login.guarded("bob", "secret")).isEqualTo("session-bob");
			clock.advanceMicros(Duration.ofMinutes(1).toNanos() / 1000);
			assertThat(login.guarded("alice", "secret")).isEqualTo("session-alice");
		}, LoginService.class);
	}

	@Test
	void aCalendarDayEndsAtTheZonesMidnight() {
		run((context) -> {
			Reports daily = context.getBean(DailyReports.class);
			ManualTimeSource clock = context.getBean(ManualTimeSource.class);
			// 2027-03-13T12:00:00Z, noon in UTC: 07:00 in New York, the day before its
			// spring change; the day there ends at 05:00 UTC on 14 March.
			clock.setMicros(1_804_939_200_000_000L);
			daily.run();
			daily.run();
			assertThatExceptionOfType(RateLimitExceededException.class).isThrownBy(daily::run)
				.satisfies((ex) -> assertThat(ex.getDecision().retryAfter()).isEqualTo(Duration.ofHours(17)));
			assertThat(observer(context).last().decision().limits().get(0).limit()).isEqualTo(2);
		}, DailyReports.class);
	}

	@Test
	void aZoneExpressionGivesEachCustomerTheirOwnMidnight() {
		run((context) -> {
			CustomerReports reports = context.getBean(CustomerReports.class);
			ManualTimeSource clock = context.getBean(ManualTimeSource.class);
			// 2027-03-13T12:00:00Z: 07:00 in New York, 21:00 in Tokyo.
			clock.setMicros(1_804_939_200_000_000L);
			reports.run("ny", "America/New_York");
			reports.run("tokyo", "Asia/Tokyo");
			assertThatExceptionOfType(RateLimitExceededException.class)
				.isThrownBy(() -> reports.run("ny", "America/New_York"))
				.satisfies((ex) -> assertThat(ex.getDecision().retryAfter()).isEqualTo(Duration.ofHours(17)));
			assertThatExceptionOfType(RateLimitExceededException.class)
				.isThrownBy(() -> reports.run("tokyo", "Asia/Tokyo"))
				.satisfies((ex) -> assertThat(ex.getDecision().retryAfter()).isEqualTo(Duration.ofHours(3)));
			assertThatIllegalArgumentException().isThrownBy(() -> reports.run("nowhere", "Mars/Base"))
				.withMessageContaining("@RateLimited(zoneExpression) on RateLimitedInterceptorTests.CustomerReports")
				.withMessageContaining("'#zone' must give a time zone")
				.withMessageContaining("'Mars/Base' (String)");
		}, CustomerReports.class);
	}

	@Test
	void aZoneExpressionOnABucketWithoutACalendarFailsStartup() {
		this.runner.withBean(BucketRegistry.class, () -> new BucketRegistry(LimitSettings.NONE, Map.of()))
			.withBean(ZonelessReports.class)
			.run((context) -> assertThat(context).hasFailed()
				.getFailure()
				.rootCause()
				.hasMessageContaining("zoneExpression")
				.hasMessageContaining("has no calendar window"));
	}

	@Test
	void refundWhenShouldSeeTheResult() {
		run((context) -> {
			LoginService login = context.getBean(LoginService.class);
			for (int i = 0; i < 10; i++) {
				assertThat(login.lookup("cached")).isEqualTo("from cache");
			}
			login.lookup("db");
			assertThatExceptionOfType(RateLimitExceededException.class).isThrownBy(() -> login.lookup("db"));
		}, LoginService.class);
	}

	@Test
	void leakyBucketDelayShouldBeWaitedBeforeTheCall() {
		run((context) -> {
			Greeter greeter = context.getBean(Greeter.class);
			ManualWaiter waiter = context.getBean(ManualWaiter.class);
			greeter.smooth(1);
			greeter.smooth(1);
			greeter.smooth(1);
			assertThat(waiter.sleeps()).containsExactly(100_000L, 100_000L);
			assertThat(greeter.calls()).isEqualTo(3);
		});
	}

	@Test
	void leakyBucketDelayLongerThanMaxWaitShouldBeRejectedWithoutTakingASlot() {
		run((context) -> {
			Greeter greeter = context.getBean(Greeter.class);
			ManualWaiter waiter = context.getBean(ManualWaiter.class);
			InMemoryRateLimitStore store = context.getBean(InMemoryRateLimitStore.class);
			BucketDefinition bucket = context.getBean(BucketRegistry.class).find("smooth");
			greeter.smooth(3);
			long remaining = store.peek("smooth", "", bucket.limits()).remaining();
			assertThatExceptionOfType(RateLimitExceededException.class).isThrownBy(() -> greeter.smooth(1));
			assertThat(store.peek("smooth", "", bucket.limits()).remaining()).isEqualTo(remaining);
			assertThat(waiter.sleeps()).isEmpty();
			assertThat(greeter.calls()).isEqualTo(1);
		});
	}

	@Test
	void shadowModeShouldNeverReject() {
		BucketSettings shadow = new BucketSettings(new LimitSettings(null, 1L, Duration.ofMinutes(1), null, null),
				List.of(), LimitMode.SHADOW);
		this.runner
			.withBean(BucketRegistry.class, () -> new BucketRegistry(LimitSettings.NONE, Map.of("greet", shadow)))
			.run((context) -> {
				Greeter greeter = context.getBean(Greeter.class);
				for (int i = 0; i < 5; i++) {
					assertThat(greeter.greet("ann")).isEqualTo("hi ann");
				}
				assertThat(observer(context).results()).extracting(RateLimitResult::outcome)
					.containsExactly(Outcome.ALLOWED, Outcome.SHADOW_REJECTED, Outcome.SHADOW_REJECTED,
							Outcome.SHADOW_REJECTED, Outcome.SHADOW_REJECTED);
			});
	}

	@Test
	void configurationShouldOverrideTheAnnotation() {
		BucketSettings one = new BucketSettings(new LimitSettings(null, 1L, null, null, null), List.of(), null);
		this.runner.withBean(BucketRegistry.class, () -> new BucketRegistry(LimitSettings.NONE, Map.of("greet", one)))
			.run((context) -> {
				Greeter greeter = context.getBean(Greeter.class);
				greeter.greet("ann");
				assertThatExceptionOfType(RateLimitExceededException.class).isThrownBy(() -> greeter.greet("ann"))
					.satisfies((ex) -> assertThat(ex.getDecision().limit()).isEqualTo(1));
			});
	}

	@Test
	void classLevelAnnotationShouldApplyToPublicMethodsAndMethodLevelShouldReplaceIt() {
		run((context) -> {
			ReportService reports = context.getBean(ReportService.class);
			reports.daily();
			reports.weekly();
			assertThatExceptionOfType(RateLimitExceededException.class).isThrownBy(reports::daily)
				.satisfies((ex) -> assertThat(ex.getBucket()).isEqualTo("reports"));
			assertThat(reports.export()).isEqualTo("export");
			assertThatExceptionOfType(RateLimitExceededException.class).isThrownBy(reports::export)
				.satisfies((ex) -> assertThat(ex.getBucket()).isEqualTo("exports"));
			for (int i = 0; i < 5; i++) {
				assertThat(reports.internal()).isEqualTo("internal");
				assertThat(reports.toString()).isEqualTo("reports");
			}
		}, ReportService.class);
	}

	@Test
	void repeatedAnnotationsShouldBeAllOrNothing() {
		run((context) -> {
			Greeter greeter = context.getBean(Greeter.class);
			InMemoryRateLimitStore store = context.getBean(InMemoryRateLimitStore.class);
			BucketDefinition wide = context.getBean(BucketRegistry.class).find("wide");
			greeter.twoLimits();
			assertThat(store.peek("wide", "", wide.limits()).remaining()).isEqualTo(4);
			assertThatExceptionOfType(RateLimitExceededException.class).isThrownBy(greeter::twoLimits)
				.satisfies((ex) -> assertThat(ex.getBucket()).isEqualTo("narrow"));
			assertThat(store.peek("wide", "", wide.limits()).remaining()).as("the permit taken from 'wide' is back")
				.isEqualTo(4);
		});
	}

	@Test
	void nullKeyShouldBeAnErrorByDefault() {
		run((context) -> {
			Greeter greeter = context.getBean(Greeter.class);
			assertThatIllegalStateException().isThrownBy(() -> greeter.perName(null))
				.withMessageContaining("@RateLimited(key) on RateLimitedInterceptorTests.Greeter.perName(String)")
				.withMessageContaining("'#name' evaluated to null");
			assertThat(greeter.calls()).isZero();
		});
	}

	@Test
	void nullKeyShouldLeaveTheCallUnlimitedWithSkip() {
		this.runner.withPropertyValues("ratelimit.null-key=skip")
			.withBean(BucketRegistry.class, () -> new BucketRegistry(LimitSettings.NONE, Map.of()))
			.run((context) -> {
				Greeter greeter = context.getBean(Greeter.class);
				for (int i = 0; i < 5; i++) {
					assertThat(greeter.perName(null)).isEqualTo("hi null");
				}
				greeter.perName("ann");
				greeter.perName("ann");
				assertThatExceptionOfType(RateLimitExceededException.class).isThrownBy(() -> greeter.perName("ann"));
			});
	}

	@Test
	void expressionThrowingAtRuntimeShouldNameTheExpressionAndMethod() {
		run((context) -> {
			Greeter greeter = context.getBean(Greeter.class);
			assertThatIllegalStateException().isThrownBy(() -> greeter.exploding("ann"))
				.withMessageContaining("SpEL '@plans.explode(#name)'")
				.withMessageContaining("@RateLimited(key) on RateLimitedInterceptorTests.Greeter.exploding(String)")
				.withMessageContaining("no plan for ann")
				.withRootCauseInstanceOf(UnsupportedOperationException.class);
			assertThatExceptionOfType(InvalidExpressionException.class).isThrownBy(() -> greeter.missingProperty("ann"))
				.withMessageContaining("SpEL '#name.nope'")
				.withMessageContaining(
						"@RateLimited(key) on RateLimitedInterceptorTests.Greeter.missingProperty(String)");
			assertThat(greeter.calls()).isZero();
		});
	}

	@Test
	void bucketNameShouldDefaultToClassAndMethod() {
		run((context) -> {
			Greeter greeter = context.getBean(Greeter.class);
			greeter.unnamed();
			assertThatExceptionOfType(RateLimitExceededException.class).isThrownBy(greeter::unnamed)
				.satisfies((ex) -> assertThat(ex.getBucket()).isEqualTo("Greeter.unnamed"));
		});
	}

	@Test
	void rejectedTickOfAScheduledTaskShouldBeSkippedWithoutThrowing() {
		run((context) -> {
			Ticker ticker = context.getBean(Ticker.class);
			ticker.tick();
			ticker.tick();
			assertThat(ticker.ticks()).isEqualTo(1);
			assertThat(observer(context).outcomes()).containsExactly(Outcome.ALLOWED, Outcome.REJECTED);
			ticker.tickWithFallback();
			ticker.tickWithFallback();
			assertThat(ticker.fallbacks()).isEqualTo(1);
			ticker.notScheduled();
			assertThatExceptionOfType(RateLimitExceededException.class).isThrownBy(ticker::notScheduled);
		}, Ticker.class);
	}

	@Test
	void beansWithoutTheAnnotationShouldNotBeProxied() {
		run((context) -> assertThat(AopUtils.isAopProxy(context.getBean(Plans.class))).isFalse());
	}

	private void run(ThrowingContextConsumer consumer, Class<?>... beans) {
		ApplicationContextRunner runner = this.runner.withBean(BucketRegistry.class,
				() -> new BucketRegistry(LimitSettings.NONE, Map.of()));
		for (Class<?> bean : beans) {
			runner = runner.withBean(bean);
		}
		runner.run(consumer::accept);
	}

	private static RecordingObserver observer(AssertableApplicationContext context) {
		return context.getBean(RecordingObserver.class);
	}

	@FunctionalInterface
	interface ThrowingContextConsumer {

		void accept(AssertableApplicationContext context) throws Throwable;

	}

	static class Plans {

		public @Nullable Integer limitFor(String apiKey) {
			return switch (apiKey) {
				case "premium" -> 5;
				case "free" -> 2;
				case "zero" -> 0;
				case "negative" -> -3;
				default -> null;
			};
		}

		public String explode(String name) {
			throw new UnsupportedOperationException("no plan for " + name);
		}

		public String tier() {
			return "premium";
		}

	}

	static class Ticker {

		int ticks;

		int fallbacks;

		int ticks() {
			return this.ticks;
		}

		int fallbacks() {
			return this.fallbacks;
		}

		@Scheduled(fixedDelay = 60_000)
		@RateLimited(bucket = "tick", limit = 1, window = "1m")
		public void tick() {
			this.ticks++;
		}

		@Scheduled(fixedDelay = 60_000)
		@RateLimited(bucket = "tick-fallback", limit = 1, window = "1m", fallbackMethod = "skipped")
		public void tickWithFallback() {
		}

		public void skipped(RateLimitExceededException ex) {
			this.fallbacks++;
		}

		@RateLimited(bucket = "not-scheduled", limit = 1, window = "1m")
		public void notScheduled() {
		}

	}

	static class Greeter {

		private int calls;

		int calls() {
			return this.calls;
		}

		public String getPrefix() {
			return "hello";
		}

		@RateLimited(bucket = "greet", limit = 3, window = "1m")
		public String greet(String name) {
			this.calls++;
			return "hi " + name;
		}

		@RateLimited(bucket = "perName", key = "#name", limit = 2, window = "1m")
		public String perName(@Nullable String name) {
			this.calls++;
			return "hi " + name;
		}

		@RateLimited(bucket = "variables", limit = 10, window = "1m",
				key = "#method.name + '|' + #name + '|' + #count + '|' + #args.length + '|' + #p0 + '|' + #target.prefix + '|' + @plans.tier()")
		public String variables(String name, int count) {
			return name + count;
		}

		@RateLimited(bucket = "principal", key = "#principal.name", limit = 1, window = "1m")
		public String whoAmI() {
			return "me";
		}

		@RateLimited(bucket = "request", key = "#request.remoteAddr", limit = 1, window = "1m")
		public String fromRequest() {
			return "request";
		}

		@RateLimited(bucket = "clientIp", key = "#clientIp", limit = 10, window = "1m")
		public String fromClient() {
			return "client";
		}

		@RateLimited(bucket = "clientIpArgument", key = "#clientIp", limit = 10, window = "1m")
		public String clientIpArgument(String clientIp) {
			return clientIp;
		}

		@RateLimited(bucket = "unlessAdmin", limit = 1, window = "1m", skipWhen = "#name == 'admin'")
		public String unlessAdmin(String name) {
			return name;
		}

		@RateLimited(bucket = "order", limit = 10, window = "1m", cost = "#items.size()")
		public int order(List<String> items) {
			return items.size();
		}

		@RateLimited(bucket = "weighed", limit = 100, window = "1m", cost = "#weight")
		public String weighed(Object weight) {
			return "weighed " + weight;
		}

		@RateLimited(bucket = "api", key = "#apiKey", limit = 1, window = "1m",
				limitExpression = "@plans.limitFor(#apiKey)")
		public String api(String apiKey) {
			this.calls++;
			return apiKey;
		}

		@RateLimited(bucket = "patient", limit = 1, window = "1s", onLimit = OnLimit.WAIT, maxWait = "2s")
		public String patient() {
			this.calls++;
			return "done";
		}

		@RateLimited(bucket = "impatient", limit = 1, window = "1s", onLimit = OnLimit.WAIT, maxWait = "500ms")
		public String impatient() {
			return "done";
		}

		@RateLimited(bucket = "halfPatient", limit = 1, window = "1s", onLimit = OnLimit.WAIT, maxWait = "1500ms")
		public String halfPatient() {
			this.calls++;
			return "done";
		}

		@RateLimited(bucket = "quote", limit = 1, window = "1m", fallbackMethod = "cachedQuote")
		public String quote(String symbol) {
			return "live " + symbol;
		}

		String cachedQuote(String symbol) {
			return "cached " + symbol;
		}

		@RateLimited(bucket = "quoteWithReason", limit = 1, window = "1m", fallbackMethod = "busyQuote")
		public String quoteWithReason(String symbol) {
			return "live " + symbol;
		}

		String busyQuote(String symbol, RateLimitExceededException ex) {
			return "busy " + ex.getBucket() + ": retry in " + ex.getDecision().retryAfter().toSeconds() + "s";
		}

		@RateLimited(bucket = "smooth", limit = 10, window = "1s", algorithm = Algorithm.LEAKY_BUCKET,
				maxWait = "150ms", cost = "#slots")
		public int smooth(int slots) {
			this.calls++;
			return slots;
		}

		@RateLimited(bucket = "wide", limit = 5, window = "1m")
		@RateLimited(bucket = "narrow", limit = 1, window = "1m")
		public String twoLimits() {
			return "both";
		}

		@RateLimited(bucket = "exploding", key = "@plans.explode(#name)", limit = 1, window = "1m")
		public String exploding(String name) {
			this.calls++;
			return name;
		}

		@RateLimited(bucket = "missingProperty", key = "#name.nope", limit = 1, window = "1m")
		public String missingProperty(String name) {
			this.calls++;
			return name;
		}

		@RateLimited(limit = 1, window = "1m")
		public String unnamed() {
			return "unnamed";
		}

	}

	static class LoginService {

		@RateLimited(bucket = "login", key = "#username", limit = 5, window = "1m", algorithm = Algorithm.SLIDING_LOG,
				refundWhen = "#exception == null")
		public String login(String username, String password) {
			if (!"secret".equals(password)) {
				throw new IllegalArgumentException("Bad credentials");
			}
			return "session-" + username;
		}

		@RateLimited(bucket = "guarded-login", key = "#username", limit = 3, window = "1m",
				algorithm = Algorithm.SLIDING_LOG, refundWhen = "#exception == null", penalty = "15m")
		public String guarded(String username, String password) {
			return login(username, password);
		}

		@RateLimited(bucket = "lookup", limit = 1, window = "1m", refundWhen = "#result == 'from cache'")
		public String lookup(String source) {
			return source.equals("cached") ? "from cache" : "from db";
		}

	}

	interface Reports {

		void run();

	}

	static class CustomerReports {

		@RateLimited(bucket = "customer-daily", key = "#customer", limit = 1, calendar = "day",
				algorithm = Algorithm.FIXED_WINDOW, zoneExpression = "#zone")
		public void run(String customer, String zone) {
		}

	}

	static class ZonelessReports {

		@RateLimited(bucket = "zoneless", limit = 1, window = "1d", zoneExpression = "'Europe/Berlin'")
		public void run() {
		}

	}

	static class DailyReports implements Reports {

		@Override
		@RateLimited(bucket = "daily-reports", limit = 2, calendar = "day", zone = "America/New_York",
				algorithm = Algorithm.FIXED_WINDOW)
		public void run() {
		}

	}

	@RateLimited(bucket = "reports", limit = 2, window = "1m")
	static class ReportService {

		public String daily() {
			return "daily";
		}

		public String weekly() {
			return "weekly";
		}

		@RateLimited(bucket = "exports", limit = 1, window = "1m")
		public String export() {
			return "export";
		}

		String internal() {
			return "internal";
		}

		@Override
		public String toString() {
			return "reports";
		}

	}

}
