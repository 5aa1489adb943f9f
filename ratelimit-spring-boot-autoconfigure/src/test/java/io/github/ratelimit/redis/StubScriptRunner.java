package io.github.ratelimit.redis;

import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.function.BiFunction;
import java.util.function.Consumer;

import org.jspecify.annotations.Nullable;

/**
 * A runner whose calls a test answers: started at once, nothing to close, each call
 * answered by {@code calls} from its keys and arguments.
 *
 * @param calls answers a call
 */
record StubScriptRunner(BiFunction<String[], String[], CompletableFuture<List<Object>>> calls) implements ScriptRunner {

	@Override
	public CompletableFuture<Void> start() {
		return CompletableFuture.completedFuture(null);
	}

	@Override
	public CompletableFuture<List<Object>> run(String[] keys, String[] args,
			@Nullable Consumer<List<Object>> lateReply) {
		return this.calls.apply(keys, args);
	}

	@Override
	public void close() {
	}

}
