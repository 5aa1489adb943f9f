package io.github.ratelimit.kotlin

import io.github.ratelimit.testsupport.redis.RedisServerExtension
import org.junit.jupiter.api.AfterEach
import org.junit.jupiter.api.BeforeAll
import org.junit.jupiter.api.BeforeEach
import org.junit.jupiter.api.extension.RegisterExtension
import org.springframework.test.context.DynamicPropertyRegistry
import org.springframework.test.context.DynamicPropertySource

/**
 * What the module's application tests share: a Redis server of their own, which the
 * application connects to, and BlockHound installed before the application starts; each
 * test starts with no blocking call recorded and reports those it made.
 */
abstract class OnRedisUnderBlockHound {

    @BeforeEach
    fun forgetEarlierCalls() {
        BlockingCalls.forget()
    }

    @AfterEach
    fun reportBlockingCalls() {
        BlockingCalls.report()
    }

    companion object {

        @JvmField
        @RegisterExtension
        val redis: RedisServerExtension = RedisServerExtension.standalone()

        @JvmStatic
        @BeforeAll
        fun installBlockHound() = BlockingCalls.install()

        @JvmStatic
        @DynamicPropertySource
        fun redisProperties(registry: DynamicPropertyRegistry) {
            registry.add("spring.data.redis.host") { redis.host() }
            registry.add("spring.data.redis.port") { redis.port() }
        }
    }
}
