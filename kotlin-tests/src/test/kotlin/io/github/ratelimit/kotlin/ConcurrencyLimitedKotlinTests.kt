package io.github.ratelimit.kotlin

import io.github.ratelimit.Algorithm
import io.github.ratelimit.RateLimitExceededException
import io.github.ratelimit.annotation.ConcurrencyLimited
import io.github.ratelimit.annotation.RateLimited
import io.github.ratelimit.bucket.ConcurrencyLimiters
import io.github.ratelimit.concurrency.ConcurrencyLimitExceededException
import kotlinx.coroutines.CompletableDeferred
import kotlinx.coroutines.Dispatchers
import kotlinx.coroutines.async
import kotlinx.coroutines.delay
import kotlinx.coroutines.flow.Flow
import kotlinx.coroutines.flow.flow
import kotlinx.coroutines.flow.toList
import kotlinx.coroutines.runBlocking
import kotlinx.coroutines.withTimeout
import org.assertj.core.api.Assertions.assertThat
import org.assertj.core.api.Assertions.assertThatExceptionOfType
import org.junit.jupiter.api.Test
import org.springframework.beans.factory.annotation.Autowired
import org.springframework.boot.SpringBootConfiguration
import org.springframework.boot.autoconfigure.EnableAutoConfiguration
import org.springframework.boot.test.context.SpringBootTest
import org.springframework.boot.webtestclient.autoconfigure.AutoConfigureWebTestClient
import org.springframework.context.annotation.Import
import org.springframework.stereotype.Service
import org.springframework.test.web.reactive.server.WebTestClient
import org.springframework.web.bind.annotation.GetMapping
import org.springframework.web.bind.annotation.RequestParam
import org.springframework.web.bind.annotation.RestController

/**
 * `@ConcurrencyLimited` on a `suspend` function and on a function returning a `Flow`, in a
 * Kotlin WebFlux application on Redis under BlockHound: the permit is held until the
 * function returns (the `Flow` until its collection ends), a call with none free gets a
 * 429 with `Retry-After`, and no store call blocks an event loop. With `@RateLimited` of
 * the same bucket too, the permit is taken with the rate limit's decision.
 */
@SpringBootTest(
    classes = [ConcurrencyLimitedKotlinTests.SlotsApplication::class],
    webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT,
    properties = ["spring.main.web-application-type=reactive", "ratelimit.store=redis", "ratelimit.redis.timeout=2s"],
)
@AutoConfigureWebTestClient(timeout = "PT1M")
class ConcurrencyLimitedKotlinTests : OnRedisUnderBlockHound() {

    @Autowired
    private lateinit var client: WebTestClient

    @Autowired
    private lateinit var slots: SlotService

    @Autowired
    private lateinit var limiters: ConcurrencyLimiters

    @Test
    fun aSuspendFunctionHoldsItsPermitUntilItReturns() = runBlocking {
        val first = async(Dispatchers.Default) { slots.hold("frank") }
        awaitHolders("frank", 1)
        assertThatExceptionOfType(ConcurrencyLimitExceededException::class.java)
            .isThrownBy { runBlocking { slots.hold("frank") } }
        client.get().uri("/slot?user=frank").exchange()
            .expectStatus().isEqualTo(429)
            .expectHeader().exists("Retry-After")
        slots.gate.complete(Unit)
        assertThat(withTimeout(30_000) { first.await() }).isEqualTo("held by frank")
        awaitHolders("frank", 0)
        client.get().uri("/slot?user=frank").exchange().expectStatus().isOk
        awaitHolders("frank", 0)
        assertThat(BlockingCalls.seen).isEmpty()
    }

    @Test
    fun aFlowHoldsItsPermitWhileItIsCollected() {
        val lines = slots.lines("grace")
        assertThat(runBlocking { lines.toList() }).containsExactly("a", "b")
        assertThat(runBlocking { lines.toList() }).containsExactly("a", "b")
        runBlocking { awaitHolders("grace", 0) }
    }

    @Test
    fun aSuspendFunctionLimitedBothWaysHoldsItsPermitAndSpendsTheRateLimitOnlyWhenOneIsFree() = runBlocking {
        val first = async(Dispatchers.Default) { slots.export("heidi") }
        awaitHolders("heidi", 1, "kt-exports")
        assertThatExceptionOfType(ConcurrencyLimitExceededException::class.java)
            .isThrownBy { runBlocking { slots.export("heidi") } }
        slots.exportGate.complete(Unit)
        assertThat(withTimeout(30_000) { first.await() }).isEqualTo("export for heidi")
        awaitHolders("heidi", 0, "kt-exports")
        // 2 a minute: the refusal for lack of a permit took none of them.
        assertThat(slots.export("heidi")).isEqualTo("export for heidi")
        assertThatExceptionOfType(RateLimitExceededException::class.java)
            .isThrownBy { runBlocking { slots.export("heidi") } }
        awaitHolders("heidi", 0, "kt-exports")
        assertThat(BlockingCalls.seen).isEmpty()
    }

    private suspend fun awaitHolders(user: String, count: Int, bucket: String = "kt-slots") {
        withTimeout(30_000) {
            while (limiters.find(bucket)!!.holders(user).count() != count) {
                delay(5)
            }
        }
    }

    @SpringBootConfiguration(proxyBeanMethods = false)
    @EnableAutoConfiguration
    @Import(SlotController::class, SlotService::class)
    class SlotsApplication
}

@RestController
class SlotController(private val slots: SlotService) {

    @GetMapping("/slot")
    suspend fun slot(@RequestParam user: String): String = slots.quick(user)
}

@Service
class SlotService {

    val gate = CompletableDeferred<Unit>()

    // One call per user at a time, on every instance together.
    @ConcurrencyLimited(bucket = "kt-slots", key = "#user", permits = 1)
    suspend fun hold(user: String): String {
        gate.await()
        return "held by $user"
    }

    @ConcurrencyLimited(bucket = "kt-slots", key = "#user", permits = 1)
    suspend fun quick(user: String): String {
        delay(1)
        return "quick for $user"
    }

    val exportGate = CompletableDeferred<Unit>()

    // Of one bucket and key: the permit and the rate limit in one Redis call.
    @RateLimited(bucket = "kt-exports", key = "#user", limit = 2, window = "1m", algorithm = [Algorithm.FIXED_WINDOW])
    @ConcurrencyLimited(bucket = "kt-exports", key = "#user", permits = 1)
    suspend fun export(user: String): String {
        exportGate.await()
        return "export for $user"
    }

    @ConcurrencyLimited(bucket = "kt-slots", key = "#user", permits = 1)
    fun lines(user: String): Flow<String> = flow {
        emit("a")
        emit("b")
    }
}
