package io.github.ratelimit.sample;

import reactor.core.publisher.Flux;

import org.springframework.http.HttpStatus;
import org.springframework.http.MediaType;
import org.springframework.web.bind.annotation.PostMapping;
import org.springframework.web.bind.annotation.RequestBody;
import org.springframework.web.bind.annotation.RequestHeader;
import org.springframework.web.bind.annotation.RestController;
import org.springframework.web.server.ResponseStatusException;

import io.github.ratelimit.sample.FakeModel.Chunk;
import io.github.ratelimit.sample.FakeModel.CompletionRequest;

/**
 * {@code POST /v1/completions}: streams a completion as NDJSON, one chunk per line, for
 * the API key in {@code X-Api-Key}.
 */
@RestController
class CompletionController {

	private final CompletionService completions;

	CompletionController(CompletionService completions) {
		this.completions = completions;
	}

	@PostMapping(path = "/v1/completions", produces = MediaType.APPLICATION_NDJSON_VALUE)
	Flux<Chunk> complete(@RequestHeader("X-Api-Key") String apiKey, @RequestBody CompletionRequest request) {
		if (request.maxTokens() < 1) {
			// The client's input becomes the cost: checked before it reaches the limiter.
			throw new ResponseStatusException(HttpStatus.BAD_REQUEST, "maxTokens must be at least 1");
		}
		return this.completions.complete(apiKey, request);
	}

}
