package io.github.ratelimit.testsupport.redis;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.io.UncheckedIOException;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;

/**
 * A TCP proxy on a free local port in front of a server, for faults a real server cannot
 * make on cue: it can hold what the client sends (the server never reads it) or what the
 * server answers (the server has run the command, the client never hears of it), and cut
 * every connection at once, as a dropped network or {@code CLIENT KILL} would, while
 * accepting new ones.
 *
 * @author ratelimit-spring-boot-starter authors
 */
public final class TcpProxy implements AutoCloseable {

	private final String host;

	private final int targetPort;

	private final ServerSocket server;

	private final List<Socket> sockets = new CopyOnWriteArrayList<>();

	private final AtomicLong fromClients = new AtomicLong();

	private final AtomicInteger cutsOnFirstRequest = new AtomicInteger();

	private final Object lock = new Object();

	private boolean holdRequests;

	private boolean holdReplies;

	private volatile boolean closed;

	/**
	 * Starts a proxy to {@code host:port}.
	 * @param host the server's host
	 * @param port the server's port
	 */
	public TcpProxy(String host, int port) {
		this.host = host;
		this.targetPort = port;
		try {
			this.server = new ServerSocket(0, 50, InetAddress.getLoopbackAddress());
		}
		catch (IOException ex) {
			throw new UncheckedIOException(ex);
		}
		Thread acceptor = new Thread(this::accept, "tcp-proxy-" + port);
		acceptor.setDaemon(true);
		acceptor.start();
	}

	/**
	 * The port the proxy listens on.
	 * @return the port
	 */
	public int port() {
		return this.server.getLocalPort();
	}

	/**
	 * Holds (or forwards again) what clients send: it reaches the proxy, not the server.
	 * @param hold whether to hold it
	 */
	public void holdRequests(boolean hold) {
		synchronized (this.lock) {
			this.holdRequests = hold;
			this.lock.notifyAll();
		}
	}

	/**
	 * Holds (or forwards again) what the server answers.
	 * @param hold whether to hold it
	 */
	public void holdReplies(boolean hold) {
		synchronized (this.lock) {
			this.holdReplies = hold;
			this.lock.notifyAll();
		}
	}

	/**
	 * The bytes received from clients so far, held or not.
	 * @return the count
	 */
	public long bytesFromClients() {
		return this.fromClients.get();
	}

	/**
	 * Closes each of the next {@code connections} connections as soon as its client sends
	 * something, before the server sees it: a connection cut in its handshake.
	 * @param connections how many connections to cut so
	 */
	public void cutOnFirstRequest(int connections) {
		this.cutsOnFirstRequest.set(connections);
	}

	/** Closes every connection made so far, both sides; new ones are still accepted. */
	public void cutAll() {
		for (Socket socket : this.sockets) {
			closeQuietly(socket);
		}
		this.sockets.clear();
	}

	@Override
	public void close() {
		this.closed = true;
		closeQuietly(this.server);
		cutAll();
		holdRequests(false);
	}

	private void accept() {
		while (!this.closed) {
			try {
				Socket client = this.server.accept();
				if (this.cutsOnFirstRequest.getAndUpdate((n) -> Math.max(0, n - 1)) > 0) {
					cutOnFirstRequest(client);
					continue;
				}
				Socket target = new Socket(this.host, this.targetPort);
				this.sockets.add(client);
				this.sockets.add(target);
				pump(client, target, true);
				pump(target, client, false);
			}
			catch (IOException ex) {
				// Closed, or the server is down: the client's connection fails.
			}
		}
	}

	private void cutOnFirstRequest(Socket client) {
		this.sockets.add(client);
		Thread thread = new Thread(() -> {
			try (InputStream in = client.getInputStream()) {
				this.fromClients.addAndGet(Math.max(0, in.read(new byte[8192])));
			}
			catch (IOException ex) {
				// Closed already.
			}
			finally {
				closeQuietly(client);
			}
		}, "tcp-proxy-cut");
		thread.setDaemon(true);
		thread.start();
	}

	private void pump(Socket from, Socket to, boolean requests) {
		Thread thread = new Thread(() -> {
			byte[] buffer = new byte[8192];
			try (InputStream in = from.getInputStream(); OutputStream out = to.getOutputStream()) {
				int read;
				while ((read = in.read(buffer)) >= 0) {
					if (requests) {
						this.fromClients.addAndGet(read);
					}
					awaitForwarding(requests);
					out.write(buffer, 0, read);
					out.flush();
				}
			}
			catch (IOException ex) {
				// Cut, or the other side closed.
			}
			finally {
				closeQuietly(from);
				closeQuietly(to);
			}
		}, "tcp-proxy-pump");
		thread.setDaemon(true);
		thread.start();
	}

	private void awaitForwarding(boolean requests) throws IOException {
		synchronized (this.lock) {
			while (!this.closed && (requests ? this.holdRequests : this.holdReplies)) {
				try {
					this.lock.wait();
				}
				catch (InterruptedException ex) {
					Thread.currentThread().interrupt();
					throw new IOException(ex);
				}
			}
		}
	}

	private static void closeQuietly(AutoCloseable closeable) {
		try {
			closeable.close();
		}
		catch (Exception ex) {
			// Already closed.
		}
	}

}
