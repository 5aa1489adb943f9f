package io.github.ratelimit.benchmarks;

import java.io.BufferedInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.atomic.AtomicBoolean;

import org.jspecify.annotations.Nullable;

/**
 * A small closed-loop HTTP/1.1 load generator: {@code connections} threads, each with one
 * keep-alive connection, sending {@code GET} requests back to back and recording every
 * response's latency. Plain sockets rather than {@code java.net.http}, so the client
 * spends as little of the machine's CPU as it can.
 *
 * @author ratelimit-spring-boot-starter authors
 */
final class HttpLoad {

	/**
	 * What one run saw.
	 *
	 * @param requestsPerSecond responses per second
	 * @param latenciesMicros every response's latency, sorted
	 * @param errors responses other than 200, and connection failures
	 * @param firstError the first error, or {@code ""}
	 */
	record Result(double requestsPerSecond, long[] latenciesMicros, long errors, String firstError) {

		double percentileMillis(double percentile) {
			if (this.latenciesMicros.length == 0) {
				return Double.NaN;
			}
			int index = (int) Math.ceil(percentile / 100 * this.latenciesMicros.length) - 1;
			return this.latenciesMicros[Math.max(0, index)] / 1000.0;
		}

	}

	/** The header that carries the client's key. */
	static final String KEY_HEADER = "X-Api-Key";

	private static final byte[] KEY_PREFIX = (KEY_HEADER + ": ").getBytes(StandardCharsets.US_ASCII);

	private static final byte[] CRLF = { '\r', '\n' };

	private HttpLoad() {
	}

	/**
	 * Sends requests to {@code url} on {@code connections} connections for
	 * {@code duration}.
	 * @param url the URL (http only)
	 * @param connections concurrent connections
	 * @param duration how long
	 * @return the result
	 * @throws InterruptedException when interrupted
	 */
	static Result run(URI url, int connections, Duration duration) throws InterruptedException {
		return run(url, connections, 0, duration);
	}

	/**
	 * Sends requests to {@code url} on {@code connections} connections for
	 * {@code duration}, each with an {@value #KEY_HEADER} header cycling over
	 * {@code keys} values ({@code key-0000000} and up) in a scrambled order shared by all
	 * connections.
	 * @param url the URL (http only)
	 * @param connections concurrent connections
	 * @param keys distinct key header values; 0 for no header
	 * @param duration how long
	 * @return the result
	 * @throws InterruptedException when interrupted
	 */
	static Result run(URI url, int connections, int keys, Duration duration) throws InterruptedException {
		AtomicBoolean stop = new AtomicBoolean();
		Keys keyValues = new Keys(keys);
		Worker[] workers = new Worker[connections];
		Thread[] threads = new Thread[connections];
		for (int i = 0; i < connections; i++) {
			workers[i] = new Worker(url, stop, keyValues);
			threads[i] = new Thread(workers[i], "http-load-" + i);
			threads[i].start();
		}
		long start = System.nanoTime();
		Thread.sleep(duration.toMillis());
		stop.set(true);
		long elapsed = System.nanoTime() - start;
		long responses = 0;
		long errors = 0;
		String firstError = "";
		List<long[]> all = new ArrayList<>();
		for (int i = 0; i < connections; i++) {
			threads[i].join();
			responses += workers[i].count;
			errors += workers[i].errors;
			if (firstError.isEmpty() && workers[i].firstError != null) {
				firstError = workers[i].firstError;
			}
			all.add(Arrays.copyOf(workers[i].latencies, workers[i].count));
		}
		long[] latencies = new long[(int) responses];
		int offset = 0;
		for (long[] part : all) {
			System.arraycopy(part, 0, latencies, offset, part.length);
			offset += part.length;
		}
		Arrays.sort(latencies);
		return new Result(responses * 1e9 / elapsed, latencies, errors, firstError);
	}

	/**
	 * The key header's values, handed out in a full-period scrambled order.
	 */
	private static final class Keys {

		private final byte[][] values;

		private final @Nullable ScrambledKeys order;

		Keys(int keys) {
			this.values = new byte[keys][];
			this.order = (keys > 0) ? new ScrambledKeys(keys) : null;
			for (int i = 0; i < keys; i++) {
				this.values[i] = String.format(Locale.ROOT, "key-%07d", i).getBytes(StandardCharsets.US_ASCII);
			}
		}

		byte @Nullable [] next() {
			return (this.order != null) ? this.values[this.order.next()] : null;
		}

	}

	/**
	 * One connection, sending requests back to back until told to stop.
	 */
	private static final class Worker implements Runnable {

		private final URI url;

		private final AtomicBoolean stop;

		private final byte[] head;

		private final Keys keys;

		private final byte[] request = new byte[1024];

		private long[] latencies = new long[1 << 16];

		private int count;

		private long errors;

		private String firstError = "";

		private final byte[] buffer = new byte[8192];

		Worker(URI url, AtomicBoolean stop, Keys keys) {
			this.url = url;
			this.stop = stop;
			this.keys = keys;
			String target = url.getRawPath() + ((url.getRawQuery() != null) ? "?" + url.getRawQuery() : "");
			this.head = ("GET " + target + " HTTP/1.1\r\nHost: " + url.getHost() + ":" + url.getPort()
					+ "\r\nAccept: application/json\r\n")
				.getBytes(StandardCharsets.US_ASCII);
			System.arraycopy(this.head, 0, this.request, 0, this.head.length);
		}

		/** Completes the request in {@link #request} and returns its length. */
		private int request() {
			int length = this.head.length;
			byte[] key = this.keys.next();
			if (key != null) {
				length = put(KEY_PREFIX, length);
				length = put(key, length);
				length = put(CRLF, length);
			}
			return put(CRLF, length);
		}

		private int put(byte[] bytes, int at) {
			System.arraycopy(bytes, 0, this.request, at, bytes.length);
			return at + bytes.length;
		}

		@Override
		public void run() {
			while (!this.stop.get()) {
				try (Socket socket = new Socket()) {
					socket.setTcpNoDelay(true);
					socket.connect(new InetSocketAddress(this.url.getHost(), this.url.getPort()), 5000);
					socket.setSoTimeout(10_000);
					OutputStream out = socket.getOutputStream();
					InputStream in = new BufferedInputStream(socket.getInputStream(), 16384);
					boolean open = true;
					while (open && !this.stop.get()) {
						long start = System.nanoTime();
						out.write(this.request, 0, request());
						out.flush();
						Response response = readResponse(in);
						long micros = (System.nanoTime() - start) / 1000;
						if (response.status == 200) {
							record(micros);
						}
						else {
							error("HTTP " + response.status);
						}
						open = !response.close;
					}
				}
				catch (IOException | RuntimeException ex) {
					// A reset connection, or a response this client cannot read: count
					// it, and start again on a new connection.
					if (!this.stop.get()) {
						error(ex.toString());
					}
				}
			}
		}

		private void record(long micros) {
			if (this.count == this.latencies.length) {
				this.latencies = Arrays.copyOf(this.latencies, this.count * 2);
			}
			this.latencies[this.count++] = micros;
		}

		private void error(String message) {
			if (this.errors++ == 0) {
				this.firstError = message;
			}
		}

		private Response readResponse(InputStream in) throws IOException {
			String statusLine = readLine(in);
			int status = Integer.parseInt(statusLine.substring(9, 12));
			long contentLength = -1;
			boolean chunked = false;
			boolean close = false;
			for (String line = readLine(in); !line.isEmpty(); line = readLine(in)) {
				int colon = line.indexOf(':');
				String name = line.substring(0, colon).trim();
				String value = line.substring(colon + 1).trim();
				if (name.equalsIgnoreCase("Content-Length")) {
					contentLength = Long.parseLong(value);
				}
				else if (name.equalsIgnoreCase("Transfer-Encoding") && value.equalsIgnoreCase("chunked")) {
					chunked = true;
				}
				else if (name.equalsIgnoreCase("Connection") && value.equalsIgnoreCase("close")) {
					close = true;
				}
			}
			if (chunked) {
				for (long size = Long.parseLong(readLine(in).trim(), 16); size > 0; size = Long
					.parseLong(readLine(in).trim(), 16)) {
					skip(in, size);
					readLine(in);
				}
				readLine(in);
			}
			else if (contentLength > 0) {
				skip(in, contentLength);
			}
			return new Response(status, close);
		}

		private void skip(InputStream in, long length) throws IOException {
			long left = length;
			while (left > 0) {
				int read = in.read(this.buffer, 0, (int) Math.min(this.buffer.length, left));
				if (read < 0) {
					throw new IOException("Connection closed in a response body");
				}
				left -= read;
			}
		}

		private static String readLine(InputStream in) throws IOException {
			StringBuilder line = new StringBuilder(64);
			for (int c = in.read(); c != '\n'; c = in.read()) {
				if (c < 0) {
					throw new IOException("Connection closed in a response head");
				}
				if (c != '\r') {
					line.append((char) c);
				}
			}
			return line.toString();
		}

	}

	private record Response(int status, boolean close) {

	}

}
