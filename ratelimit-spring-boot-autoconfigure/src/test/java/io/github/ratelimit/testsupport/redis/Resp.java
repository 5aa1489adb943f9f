package io.github.ratelimit.testsupport.redis;

import java.io.BufferedInputStream;
import java.io.ByteArrayOutputStream;
import java.io.EOFException;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.io.UncheckedIOException;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;

import org.jspecify.annotations.Nullable;

/**
 * A minimal blocking RESP2 client: one connection per call, no pooling, so it works the
 * same whatever state the server is in.
 *
 * @author ratelimit-spring-boot-starter authors
 */
final class Resp {

	private Resp() {
	}

	/**
	 * Runs one command and returns the reply as text.
	 * @param host the host
	 * @param port the port
	 * @param timeout connect timeout and read timeout
	 * @param args the command
	 * @return the reply as text
	 */
	static String call(String host, int port, Duration timeout, String... args) {
		return callAll(host, port, timeout, Collections.singletonList(args)).get(0);
	}

	/**
	 * Runs commands one after the other on one connection and returns their replies; an
	 * error reply of any of them is thrown.
	 * @param host the host
	 * @param port the port
	 * @param timeout connect timeout and read timeout
	 * @param list the commands
	 * @return the replies as text
	 */
	static List<String> callAll(String host, int port, Duration timeout, List<String[]> list) {
		if (list.isEmpty()) {
			throw new IllegalArgumentException("No command given");
		}
		int millis = (int) Math.max(1, Math.min(Integer.MAX_VALUE, timeout.toMillis()));
		try (Socket socket = new Socket()) {
			socket.connect(new InetSocketAddress(host, port), millis);
			socket.setSoTimeout(millis);
			socket.setTcpNoDelay(true);
			OutputStream out = socket.getOutputStream();
			InputStream in = new BufferedInputStream(socket.getInputStream());
			List<String> replies = new ArrayList<>();
			for (String[] command : list) {
				out.write(encode(command));
				out.flush();
				replies.add(format(read(in)));
			}
			return replies;
		}
		catch (IOException ex) {
			throw new UncheckedIOException("Redis command " + describe(list) + " on " + host + ":" + port + " failed: "
					+ ex.getClass().getSimpleName() + ": " + ex.getMessage(), ex);
		}
	}

	private static String describe(List<String[]> commands) {
		StringBuilder text = new StringBuilder();
		for (String[] command : commands) {
			if (text.length() > 0) {
				text.append("; ");
			}
			text.append(String.join(" ", command));
		}
		return "'" + ((text.length() > 200) ? text.substring(0, 200) + "..." : text) + "'";
	}

	private static byte[] encode(String[] args) {
		if (args.length == 0) {
			throw new IllegalArgumentException("Empty command");
		}
		ByteArrayOutputStream out = new ByteArrayOutputStream();
		writeAscii(out, "*" + args.length + "\r\n");
		for (String arg : args) {
			byte[] bytes = arg.getBytes(StandardCharsets.UTF_8);
			writeAscii(out, "$" + bytes.length + "\r\n");
			out.write(bytes, 0, bytes.length);
			writeAscii(out, "\r\n");
		}
		return out.toByteArray();
	}

	private static void writeAscii(ByteArrayOutputStream out, String text) {
		byte[] bytes = text.getBytes(StandardCharsets.US_ASCII);
		out.write(bytes, 0, bytes.length);
	}

	/**
	 * Reads one reply: a String, a Long, a List, {@code null} for nil, or an
	 * {@link ErrorReply}. Top-level errors are thrown.
	 */
	private static @Nullable Object read(InputStream in) throws IOException {
		Object reply = readValue(in);
		if (reply instanceof ErrorReply error) {
			throw new RedisCommandException(error.text());
		}
		return reply;
	}

	private static @Nullable Object readValue(InputStream in) throws IOException {
		int type = in.read();
		if (type == -1) {
			throw new EOFException("Connection closed before a reply");
		}
		String line = readLine(in);
		switch (type) {
			case '+':
				return line;
			case '-':
				return new ErrorReply(line);
			case ':':
				return Long.parseLong(line);
			case '$': {
				int length = Integer.parseInt(line);
				if (length < 0) {
					return null;
				}
				byte[] bytes = in.readNBytes(length + 2);
				if (bytes.length != length + 2) {
					throw new EOFException("Connection closed within a bulk reply");
				}
				return new String(bytes, 0, length, StandardCharsets.UTF_8);
			}
			case '*': {
				int count = Integer.parseInt(line);
				if (count < 0) {
					return null;
				}
				List<@Nullable Object> elements = new ArrayList<>(count);
				for (int i = 0; i < count; i++) {
					elements.add(readValue(in));
				}
				return elements;
			}
			default:
				throw new IOException("Unexpected RESP type '" + (char) type + "' " + line);
		}
	}

	private static String readLine(InputStream in) throws IOException {
		ByteArrayOutputStream line = new ByteArrayOutputStream();
		while (true) {
			int b = in.read();
			if (b == -1) {
				throw new EOFException("Connection closed within a reply");
			}
			if (b == '\r') {
				int next = in.read();
				if (next != '\n') {
					throw new IOException("Malformed RESP line");
				}
				return line.toString(StandardCharsets.UTF_8);
			}
			line.write(b);
		}
	}

	private static String format(@Nullable Object reply) {
		if (reply == null) {
			return "";
		}
		if (reply instanceof List<?> elements) {
			List<String> lines = new ArrayList<>(elements.size());
			for (Object element : elements) {
				lines.add(format(element));
			}
			return String.join("\n", lines);
		}
		if (reply instanceof ErrorReply error) {
			return error.text();
		}
		return reply.toString();
	}

	private record ErrorReply(String text) {
	}

}
