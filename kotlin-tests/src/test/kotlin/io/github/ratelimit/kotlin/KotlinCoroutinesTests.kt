package io.github.ratelimit.kotlin

import io.github.ratelimit.RateLimitExceededException
import io.github.ratelimit.acquire.Acquirer
import io.github.ratelimit.aop.operation.RateLimitedOperationSource
import kotlinx.coroutines.flow.toList
import kotlinx.coroutines.runBlocking
import org.assertj.core.api.Assertions.assertThat
import org.assertj.core.api.Assertions.assertThatExceptionOfType
import org.junit.jupiter.api.MethodOrderer
import org.junit.jupiter.api.Order
import org.junit.jupiter.api.Test
import org.junit.jupiter.api.TestMethodOrder
import org.springframework.beans.factory.annotation.Autowired
import org.springframework.boot.SpringBootConfiguration
import org.springframework.boot.autoconfigure.EnableAutoConfiguration
import org.springframework.boot.test.context.SpringBootTest
import org.springframework.boot.webtestclient.autoconfigure.AutoConfigureWebTestClient
import org.springframework.context.annotation.Import
import org.springframework.test.web.reactive.server.WebTestClient
import kotlin.coroutines.Continuation

/**
 * A Kotlin WebFlux application on Redis, as the README shows it ([QuoteController],
 * [QuoteService]): `suspend` functions and
 * functions returning a `Flow` are limited without blocking a non-blocking thread
 * (BlockHound is installed before the application starts and records every blocking
 * call such a thread makes), with the limit headers of a `Mono`; a `Flow` is charged on
 * each collection; keys and messages see the function as declared, not its
 * `Continuation`.
 */
@SpringBootTest(
    classes = [KotlinCoroutinesTests.KotlinApplication::class],
    webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT,
    properties = ["spring.main.web-application-type=reactive", "ratelimit.store=redis", "ratelimit.redis.timeout=2s"],
)
@AutoConfigureWebTestClient(timeout = "PT1M")
@TestMethodOrder(MethodOrderer.OrderAnnotation::class)
class KotlinCoroutinesTests : OnRedisUnderBlockHound() {

    @Autowired
    private lateinit var client: WebTestClient

    @Autowired
    private lateinit var quotes: QuoteService

    @Autowired
    private lateinit var answers: AnswerService

    @Autowired
    private lateinit var acquirer: Acquirer

    @Autowired
    private lateinit var operations: RateLimitedOperationSource

    @Test
    fun aSuspendHandlerIsLimitedWithoutBlockingWithTheLimitHeaders() {
        assertThat(acquirer.store().name()).contains("redis")
        repeat(2) {
            client.get().uri("/quote?user=alice").exchange()
                .expectStatus().isOk
                .expectHeader().exists("RateLimit")
                .expectBody(String::class.java).isEqualTo("quote for alice")
        }
        client.get().uri("/quote?user=alice").exchange()
            .expectStatus().isEqualTo(429)
            .expectHeader().exists("Retry-After")
        // Keyed by the declared argument: another user has a limit of its own.
        client.get().uri("/quote?user=bob").exchange().expectStatus().isOk
        assertThat(BlockingCalls.seen).isEmpty()
    }

    @Test
    fun aFlowIsChargedOnEachCollection() {
        val ticks = quotes.ticks("carol")
        quotes.ticks("carol")
        quotes.ticks("carol")
        // Three flows made, none collected: nothing charged yet.
        assertThat(runBlocking { ticks.toList() }).containsExactly("a", "b")
        assertThat(runBlocking { ticks.toList() }).containsExactly("a", "b")
        assertThatExceptionOfType(RateLimitExceededException::class.java)
            .isThrownBy { runBlocking { ticks.toList() } }
    }

    // First, before any test initializes kotlinx-coroutines on its own thread: the first
    // limited Flow must not initialize it on the event loop (a ServiceLoader reads files).
    @Test
    @Order(1)
    fun aFlowHandlerIsLimitedWithoutBlocking() {
        repeat(2) {
            client.get().uri("/ticks?user=dave").exchange().expectStatus().isOk
                .expectBody(String::class.java).isEqualTo("ab")
        }
        client.get().uri("/ticks?user=dave").exchange().expectStatus().isEqualTo(429)
        assertThat(BlockingCalls.seen).isEmpty()
    }

    @Test
    fun aSuspendFunctionFallsBackOnASuspendFunction() {
        assertThat(runBlocking { answers.answer("erin") }).isEqualTo("answer for erin")
        assertThat(runBlocking { answers.answer("erin") }).isEqualTo("busy, erin")
    }

    @Test
    fun messagesNameTheFunctionAsDeclared() {
        val answer = AnswerService::class.java.getMethod("answer", String::class.java, Continuation::class.java)
        assertThat(operations.getRateLimitedMethod(answer, AnswerService::class.java)!!.description())
            .isEqualTo("suspend AnswerService.answer(String)")
    }

    @SpringBootConfiguration(proxyBeanMethods = false)
    @EnableAutoConfiguration
    @Import(QuoteController::class, QuoteService::class, AnswerService::class)
    class KotlinApplication
}
