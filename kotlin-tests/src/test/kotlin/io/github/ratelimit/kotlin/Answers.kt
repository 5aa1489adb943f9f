package io.github.ratelimit.kotlin

import io.github.ratelimit.RateLimitExceededException
import io.github.ratelimit.annotation.RateLimited
import kotlinx.coroutines.delay
import org.springframework.stereotype.Service

@Service
class AnswerService {

    @RateLimited(bucket = "answers", key = "#user", limit = 1, window = "1m", fallbackMethod = "busy")
    suspend fun answer(user: String): String {
        delay(1)
        return "answer for $user"
    }

    // A suspend function's fallback is a suspend function: same parameters, and
    // optionally the exception.
    suspend fun busy(user: String, ex: RateLimitExceededException): String {
        delay(1)
        return "busy, $user"
    }
}
