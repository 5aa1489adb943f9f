package io.github.ratelimit.clientip;

import java.net.Inet4Address;
import java.net.InetAddress;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.concurrent.atomic.AtomicBoolean;

import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import org.jspecify.annotations.Nullable;

/**
 * Works out the client's address of a request, for {@code #clientIp}: the one place that
 * does, for the servlet filter, the reactive filter, {@code @RateLimited} expressions and
 * the gateway's key resolver alike.
 * <p>
 * The walk starts from the address of the connection (the peer). A peer that is not a
 * trusted proxy is the client, and its forwarded header is ignored entirely: anyone can
 * send one. From a trusted proxy, the forwarded header is read from the right, the
 * address each proxy appended first, past every address that is a trusted proxy too; the
 * client is the first address that is not (or the leftmost, when all are). An address is
 * a trusted proxy when it is in one of the trusted ranges, or when it is one of the first
 * {@code trustedHops} hops counted from the application (the peer is hop 0). An entry
 * that is not an address ({@code unknown}, an obfuscated {@code _hidden}, garbage) ends
 * the walk: the client is then the trusted proxy that passed it on. Nothing on this path
 * throws.
 * <p>
 * Addresses are written in one form (see {@link IpAddresses}), so a client is one key
 * however a server or a proxy wrote its address, on every request stack.
 * <p>
 * With nothing trusted, the default, the client is the peer, and the first request that
 * carries a forwarded header ({@code X-Forwarded-For}, {@code Forwarded},
 * {@code X-Real-IP} or the configured one) is logged at WARN, once: behind a proxy every
 * client would share the proxy's limits, and the message names the property to set.
 *
 * @author ratelimit-spring-boot-starter authors
 */
public final class ClientIpResolver {

	/** The forwarded header read unless another is configured. */
	public static final String X_FORWARDED_FOR = "X-Forwarded-For";

	private static final List<String> FORWARDED_HEADERS = List.of(X_FORWARDED_FOR, ForwardedHeader.FORWARDED,
			"X-Real-IP");

	private static final Log logger = LogFactory.getLog(ClientIpResolver.class);

	private final List<AddressRange> trustedProxies;

	private final int trustedHops;

	private final String header;

	/** Headers whose presence, while nothing is trusted, is worth the warning. */
	private final List<String> forwardedHeaders;

	private final AtomicBoolean warned = new AtomicBoolean();

	/**
	 * Creates a resolver.
	 * @param trustedProxies the addresses of the trusted proxies
	 * @param trustedHops how many hops in front of the application are trusted proxies,
	 * whatever their address (0 for none)
	 * @param header the forwarded header the trusted proxies set:
	 * {@code X-Forwarded-For}, {@code Forwarded} (RFC 7239), or another header of
	 * addresses separated by commas (such as {@code X-Real-IP})
	 */
	public ClientIpResolver(List<AddressRange> trustedProxies, int trustedHops, String header) {
		this.trustedProxies = List.copyOf(Objects.requireNonNull(trustedProxies, "'trustedProxies' must not be null"));
		if (trustedHops < 0) {
			throw new IllegalArgumentException("'trustedHops' must not be negative");
		}
		this.trustedHops = trustedHops;
		Objects.requireNonNull(header, "'header' must not be null");
		if (header.isBlank()) {
			throw new IllegalArgumentException("'header' must not be blank");
		}
		this.header = header.trim();
		List<String> forwardedHeaders = new ArrayList<>(FORWARDED_HEADERS);
		if (FORWARDED_HEADERS.stream().noneMatch(this.header::equalsIgnoreCase)) {
			forwardedHeaders.add(this.header);
		}
		this.forwardedHeaders = List.copyOf(forwardedHeaders);
	}

	/**
	 * Returns a resolver that trusts no proxy: the client is the peer.
	 * @return the resolver
	 */
	public static ClientIpResolver trustingNothing() {
		return new ClientIpResolver(List.of(), 0, X_FORWARDED_FOR);
	}

	/**
	 * Returns whether no proxy is trusted, so that the client is always the peer.
	 * @return {@code true} without trusted ranges and trusted hops
	 */
	public boolean trustsNothing() {
		return this.trustedProxies.isEmpty() && this.trustedHops == 0;
	}

	/**
	 * Returns the client's address of a request.
	 * @param peer the address of the connection as the server reports it, e.g.
	 * {@code 10.0.0.7}
	 * @param headers the request's headers
	 * @return the client's address in the one form keys use, the peer as given when it is
	 * no address (e.g. a Unix domain socket's), or {@code null} without a peer
	 */
	public @Nullable String resolve(@Nullable String peer, RequestHeaders headers) {
		if (peer == null) {
			return null;
		}
		InetAddress peerAddress = IpAddresses.parse(peer);
		if (trustsNothing()) {
			warnOnceIfForwarded(peerAddress, headers);
			return peerText(peer, peerAddress);
		}
		if (!trusted(0, peerAddress)) {
			return peerText(peer, peerAddress);
		}
		InetAddress client = peerAddress;
		List<String> entries = ForwardedHeader.entriesFromRight(this.header, headers.values(this.header));
		for (int hop = 1; hop <= entries.size(); hop++) {
			InetAddress next = ForwardedHeader.address(entries.get(hop - 1));
			if (next == null) {
				break;
			}
			client = next;
			if (!trusted(hop, next)) {
				break;
			}
		}
		return (client != peerAddress && client != null) ? IpAddresses.format(client) : peerText(peer, peerAddress);
	}

	@Override
	public String toString() {
		if (trustsNothing()) {
			return "the connection's address (no proxy trusted)";
		}
		List<String> trusted = new ArrayList<>();
		if (!this.trustedProxies.isEmpty()) {
			trusted.add(this.trustedProxies.toString());
		}
		if (this.trustedHops > 0) {
			trusted.add(this.trustedHops + " hop" + ((this.trustedHops > 1) ? "s" : ""));
		}
		return this.header + " past trusted proxies " + String.join(" and ", trusted);
	}

	private boolean trusted(int hop, @Nullable InetAddress address) {
		if (hop < this.trustedHops) {
			return true;
		}
		if (address != null) {
			for (AddressRange range : this.trustedProxies) {
				if (range.contains(address)) {
					return true;
				}
			}
		}
		return false;
	}

	/**
	 * Returns the peer's address as keys write it: as the server wrote it when that is
	 * already the form (the usual IPv4 address), to spare the formatting.
	 */
	private static String peerText(String peer, @Nullable InetAddress address) {
		if (address == null) {
			return peer;
		}
		boolean written = address instanceof Inet4Address && peer.indexOf(':') < 0 && !peer.startsWith("[");
		return written ? peer : IpAddresses.format(address);
	}

	private void warnOnceIfForwarded(@Nullable InetAddress peer, RequestHeaders headers) {
		if (this.warned.get()) {
			return;
		}
		for (String name : this.forwardedHeaders) {
			if (!headers.values(name).isEmpty()) {
				if (this.warned.compareAndSet(false, true)) {
					logger.warn(ignoredHeader(name, peer));
				}
				return;
			}
		}
	}

	private String ignoredHeader(String name, @Nullable InetAddress peer) {
		String from = (peer != null) ? " from " + IpAddresses.format(peer) : "";
		String header = name.equalsIgnoreCase(this.header) ? "" : ", and ratelimit.client-ip.header to " + name;
		return "A request" + from + " carries a " + name + " header, which was ignored for #clientIp: no proxy is"
				+ " trusted (ratelimit.client-ip.trusted-proxies is empty), so #clientIp is the address of the"
				+ " connection. If a proxy in front of the application sets this header, every client behind it"
				+ " shares the proxy's limits: set ratelimit.client-ip.trusted-proxies to the proxy's addresses"
				+ " (e.g. 10.0.0.0/8) or ratelimit.client-ip.trusted-hops to the number of proxies" + header
				+ ". If no proxy sets it, clients send it themselves and it must stay ignored. (Logged once.)";
	}

}
