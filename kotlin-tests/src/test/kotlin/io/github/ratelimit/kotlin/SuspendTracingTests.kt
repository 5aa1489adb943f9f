package io.github.ratelimit.kotlin

import io.github.ratelimit.annotation.RateLimited
import io.github.ratelimit.testsupport.tracing.SpanTree
import io.micrometer.observation.ObservationRegistry
import io.micrometer.tracing.handler.DefaultTracingObservationHandler
import io.micrometer.tracing.test.simple.SimpleSpan
import io.micrometer.tracing.test.simple.SimpleTracer
import kotlinx.coroutines.delay
import org.assertj.core.api.Assertions.assertThat
import org.junit.jupiter.api.Test
import org.springframework.beans.factory.annotation.Autowired
import org.springframework.boot.SpringBootConfiguration
import org.springframework.boot.autoconfigure.EnableAutoConfiguration
import org.springframework.boot.test.context.SpringBootTest
import org.springframework.boot.webtestclient.autoconfigure.AutoConfigureWebTestClient
import org.springframework.context.annotation.Bean
import org.springframework.context.annotation.Import
import org.springframework.stereotype.Service
import org.springframework.test.web.reactive.server.WebTestClient
import org.springframework.web.bind.annotation.GetMapping
import org.springframework.web.bind.annotation.RequestParam
import org.springframework.web.bind.annotation.RestController
import java.time.Duration

/**
 * The decision of a `suspend` function is a span under the HTTP request's span, with the
 * store's `EVALSHA` under it, on Redis and with Spring Boot's default Reactor context
 * propagation: for a suspend handler and for a suspend service function a handler calls.
 * Under BlockHound, as every test of the module, with the test tracer's own span list
 * allowed to lock ([BlockingCalls]).
 */
@SpringBootTest(
    classes = [SuspendTracingTests.TracedApplication::class],
    webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT,
    properties = [
        "spring.main.web-application-type=reactive", "ratelimit.store=redis", "ratelimit.redis.timeout=5s",
        // Its script call, every 500ms by default, is a trace of its own.
        "ratelimit.redis.heartbeat-interval=1h",
    ],
)
@AutoConfigureWebTestClient(timeout = "PT1M")
class SuspendTracingTests : OnRedisUnderBlockHound() {

    @Autowired
    private lateinit var client: WebTestClient

    @Autowired
    private lateinit var tracer: SimpleTracer

    @Test
    fun aSuspendHandlersDecisionIsASpanUnderTheRequest() {
        val mark = SpanTree.mark(tracer)
        client.get().uri("/traced/quote?user=alice").exchange().expectStatus().isOk
        assertThat(treeOf(mark, "http get /traced/quote")).isEqualTo(
            """
            http get /traced/quote
              ratelimit traced-quotes [algorithm=token-bucket, bucket=traced-quotes, degraded=false, outcome=allowed, store=redis]
                evalsha

            """.trimIndent(),
        )
        assertThat(BlockingCalls.seen).isEmpty()
    }

    @Test
    fun aSuspendServiceFunctionsDecisionIsASpanUnderTheRequest() {
        val mark = SpanTree.mark(tracer)
        client.get().uri("/traced/answer?user=bob").exchange().expectStatus().isOk
        assertThat(treeOf(mark, "http get /traced/answer")).isEqualTo(
            """
            http get /traced/answer
              ratelimit traced-answers [algorithm=token-bucket, bucket=traced-answers, degraded=false, outcome=allowed, store=redis]
                evalsha

            """.trimIndent(),
        )
        assertThat(BlockingCalls.seen).isEmpty()
    }

    private fun treeOf(mark: Int, request: String): String =
        SpanTree.drawSince(tracer, mark, { span: SimpleSpan -> span.name == request }, Duration.ofSeconds(30))

    @SpringBootConfiguration(proxyBeanMethods = false)
    @EnableAutoConfiguration
    @Import(TracedController::class, TracedAnswers::class)
    class TracedApplication {

        @Bean
        fun simpleTracer() = SimpleTracer()

        // Spring Boot's ObservationAutoConfiguration is not on this module's class path:
        // the registry is the application's own, and WebFlux's and Lettuce's
        // instrumentations use it as they would Boot's.
        @Bean
        fun observationRegistry(tracer: SimpleTracer): ObservationRegistry = ObservationRegistry.create().apply {
            observationConfig().observationHandler(DefaultTracingObservationHandler(tracer))
        }
    }

    @RestController
    class TracedController(private val answers: TracedAnswers) {

        @GetMapping("/traced/quote")
        @RateLimited(bucket = "traced-quotes", key = "#user", limit = 5, window = "1m")
        suspend fun quote(@RequestParam user: String): String {
            delay(1)
            return "quote for $user"
        }

        @GetMapping("/traced/answer")
        suspend fun answer(@RequestParam user: String): String = answers.answer(user)
    }

    @Service
    class TracedAnswers {

        @RateLimited(bucket = "traced-answers", key = "#user", limit = 5, window = "1m")
        suspend fun answer(user: String): String {
            delay(1)
            return "answer for $user"
        }
    }
}
