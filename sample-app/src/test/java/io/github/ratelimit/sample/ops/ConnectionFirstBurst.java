package io.github.ratelimit.sample.ops;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.io.UncheckedIOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;

/**
 * A load generator that makes every request arrive at once: it opens all its connections
 * first, round-robin over the given ports, then sends one request on each at the same
 * moment, from a thread per connection, and reads the answers. Plain sockets and
 * HTTP/1.1, so that nothing but the servers decides when a request is served.
 */
final class ConnectionFirstBurst {

	private static final int SOCKET_TIMEOUT_MILLIS = 60_000;

	private ConnectionFirstBurst() {
	}

	/**
	 * Fires {@code requests} simultaneous {@code GET}s.
	 * @param requests how many
	 * @param path the path and query
	 * @param clientIp the {@code X-Forwarded-For} value: the client as servers that trust
	 * 127.0.0.1 as a proxy see it
	 * @param ports the servers' ports, used in turn
	 * @return the answers, in connection order
	 */
	static Result fire(int requests, String path, String clientIp, int... ports) {
		byte[] request = ("GET " + path + " HTTP/1.1\r\nHost: localhost\r\nX-Forwarded-For: " + clientIp
				+ "\r\nConnection: close\r\n\r\n")
			.getBytes(StandardCharsets.US_ASCII);
		List<Socket> sockets = new ArrayList<>(requests);
		try {
			for (int i = 0; i < requests; i++) {
				Socket socket = new Socket();
				sockets.add(socket);
				socket.setTcpNoDelay(true);
				socket.setSoTimeout(SOCKET_TIMEOUT_MILLIS);
				socket.connect(new InetSocketAddress(InetAddress.getLoopbackAddress(), ports[i % ports.length]),
						SOCKET_TIMEOUT_MILLIS);
			}
			int[] statuses = new int[requests];
			long[] nanos = new long[requests];
			CountDownLatch ready = new CountDownLatch(requests);
			CountDownLatch go = new CountDownLatch(1);
			List<Thread> threads = new ArrayList<>(requests);
			for (int i = 0; i < requests; i++) {
				int index = i;
				Socket socket = sockets.get(i);
				Thread thread = new Thread(() -> {
					ready.countDown();
					try {
						go.await();
						long started = System.nanoTime();
						statuses[index] = exchange(socket, request);
						nanos[index] = System.nanoTime() - started;
					}
					catch (IOException ex) {
						statuses[index] = -1;
					}
					catch (InterruptedException ex) {
						Thread.currentThread().interrupt();
					}
				}, "burst-" + i);
				threads.add(thread);
				thread.start();
			}
			ready.await(SOCKET_TIMEOUT_MILLIS, TimeUnit.MILLISECONDS);
			go.countDown();
			for (Thread thread : threads) {
				thread.join(2L * SOCKET_TIMEOUT_MILLIS);
			}
			return new Result(statuses, nanos, ports);
		}
		catch (IOException ex) {
			throw new UncheckedIOException("Could not connect for a burst", ex);
		}
		catch (InterruptedException ex) {
			Thread.currentThread().interrupt();
			throw new IllegalStateException(ex);
		}
		finally {
			for (Socket socket : sockets) {
				try {
					socket.close();
				}
				catch (IOException ex) {
					// closing
				}
			}
		}
	}

	private static int exchange(Socket socket, byte[] request) throws IOException {
		OutputStream out = socket.getOutputStream();
		out.write(request);
		out.flush();
		InputStream in = socket.getInputStream();
		byte[] buffer = new byte[8192];
		StringBuilder response = new StringBuilder();
		int read;
		while ((read = in.read(buffer)) > 0) {
			response.append(new String(buffer, 0, read, StandardCharsets.ISO_8859_1));
		}
		String text = response.toString();
		return text.startsWith("HTTP/1.1 ") ? Integer.parseInt(text.substring(9, 12)) : -1;
	}

	/**
	 * The answers of one burst.
	 *
	 * @param statuses the HTTP status per request ({@code -1}: no answer)
	 * @param nanos the time each request took
	 * @param ports the ports, used in turn
	 */
	record Result(int[] statuses, long[] nanos, int[] ports) {

		long count(int status) {
			return Arrays.stream(this.statuses).filter((s) -> s == status).count();
		}

		long admitted() {
			return count(200);
		}

		long admittedBy(int port) {
			long admitted = 0;
			for (int i = 0; i < this.statuses.length; i++) {
				if (this.ports[i % this.ports.length] == port && this.statuses[i] == 200) {
					admitted++;
				}
			}
			return admitted;
		}

		long percentileMillis(double percentile) {
			long[] sorted = Arrays.stream(this.nanos).sorted().toArray();
			int index = (int) Math.ceil(percentile / 100 * sorted.length) - 1;
			return TimeUnit.NANOSECONDS.toMillis(sorted[Math.max(0, Math.min(sorted.length - 1, index))]);
		}

		@Override
		public String toString() {
			StringBuilder admitted = new StringBuilder();
			for (int port : this.ports) {
				admitted.append((admitted.length() > 0) ? "+" : "").append(admittedBy(port));
			}
			return this.statuses.length + " requests: " + admitted() + " admitted (" + admitted + "), " + count(429)
					+ " rejected, " + (this.statuses.length - admitted() - count(429)) + " other; p50 "
					+ percentileMillis(50) + " ms, p99 " + percentileMillis(99) + " ms, max " + percentileMillis(100)
					+ " ms";
		}

	}

}
