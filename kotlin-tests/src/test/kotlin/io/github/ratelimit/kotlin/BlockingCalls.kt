package io.github.ratelimit.kotlin

import reactor.blockhound.BlockHound
import reactor.blockhound.BlockingOperationError
import java.util.concurrent.CopyOnWriteArrayList
import java.util.concurrent.atomic.AtomicBoolean

/**
 * BlockHound for every test class of the module (one JVM: BlockHound instruments it for
 * good, so it is installed once, by whichever class starts first), and the blocking
 * calls it saw on a non-blocking thread, each with the frames that say where.
 */
object BlockingCalls {

    private val installed = AtomicBoolean()

    private val calls = CopyOnWriteArrayList<String>()

    /** The blocking calls seen since the last [forget]. */
    val seen: List<String> get() = calls.toList()

    fun install() {
        if (!installed.compareAndSet(false, true)) {
            return
        }
        // No warming up here: kotlinx-coroutines-reactive looks its context injectors up
        // with a ServiceLoader (reading jars) the first time a Mono is awaited or a Flow
        // adapted, and the starter does that at startup (KotlinFlows.initialize), not on
        // the first event loop that limits a coroutine. The tests check that it does.
        // As WebFluxBlockHoundTests: a decision answered on Lettuce's event loop is
        // handed to a ThreadPoolExecutor, whose queue lock is held for an enqueue.
        BlockHound.builder()
            .loadIntegrations()
            .allowBlockingCallsInside("java.util.concurrent.ThreadPoolExecutor", "execute")
            .allowBlockingCallsInside("java.util.concurrent.ScheduledThreadPoolExecutor", "schedule")
            // Netty's buffer allocator takes a write lock for a moment when it adds
            // magazines; two event loops registering connections at once (the store's two
            // concurrency connections) contend for it, and a class run alone saw BlockHound
            // stop a connection's registration there.
            .allowBlockingCallsInside("io.netty.buffer.AdaptivePoolingAllocator\$MagazineGroup", "tryExpandMagazines")
            // The test tracer keeps its spans in a LinkedBlockingDeque, whose lock a
            // test thread reading them may hold for a moment; a real tracer's exporter
            // is not the starter's to vouch for.
            .allowBlockingCallsInside("io.micrometer.tracing.test.simple.SimpleTracer", "nextSpan")
            .allowBlockingCallsInside("io.micrometer.tracing.test.simple.SimpleSpanBuilder", "start")
            .blockingMethodCallback { method ->
                val frames = Throwable().stackTrace.take(25).joinToString("") { "\n\tat $it" }
                calls.add("$method on ${Thread.currentThread().name}$frames")
                throw BlockingOperationError(method)
            }
            .install()
    }

    fun forget() = calls.clear()

    /** Prints what was seen: a blocking call BlockHound stops can leave a request unanswered. */
    fun report() = calls.forEach { println("[blockhound] blocking call: $it") }
}
