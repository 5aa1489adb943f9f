package io.github.ratelimit.kotlin

import io.github.ratelimit.annotation.RateLimited
import kotlinx.coroutines.delay
import kotlinx.coroutines.flow.Flow
import kotlinx.coroutines.flow.flow
import org.springframework.stereotype.Service
import org.springframework.web.bind.annotation.GetMapping
import org.springframework.web.bind.annotation.RequestParam
import org.springframework.web.bind.annotation.RestController

@RestController
class QuoteController(private val quotes: QuoteService) {

    // 2 per minute per user, decided without blocking the event loop.
    @GetMapping("/quote")
    @RateLimited(bucket = "quotes", key = "#user", limit = 2, window = "1m")
    suspend fun quote(@RequestParam user: String): String {
        delay(1)
        return "quote for $user"
    }

    @GetMapping("/ticks")
    fun ticks(@RequestParam user: String): Flow<String> = quotes.ticks(user)
}

@Service
class QuoteService {

    // Charged each time the Flow is collected, not when ticks() is called.
    @RateLimited(bucket = "ticks", key = "#user", limit = 2, window = "1m")
    fun ticks(user: String): Flow<String> = flow {
        emit("a")
        emit("b")
    }
}
