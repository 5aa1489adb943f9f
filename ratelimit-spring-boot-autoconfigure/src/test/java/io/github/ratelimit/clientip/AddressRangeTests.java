package io.github.ratelimit.clientip;

import java.net.InetAddress;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatIllegalArgumentException;

/**
 * Tests for {@link AddressRange}: CIDR ranges of IPv4 and IPv6, single addresses,
 * IPv4-mapped addresses, and what a malformed range is told.
 *
 * @author ratelimit-spring-boot-starter authors
 */
class AddressRangeTests {

	@ParameterizedTest
	@CsvSource(delimiter = '|', textBlock = """
			10.0.0.0/8        | 10.255.1.2       | true
			10.0.0.0/8        | 11.0.0.1         | false
			10.0.0.0/8        | ::ffff:10.1.2.3  | true
			10.1.2.3/8        | 10.9.9.9         | true
			172.16.0.0/12     | 172.31.255.255   | true
			172.16.0.0/12     | 172.32.0.0       | false
			192.168.1.10      | 192.168.1.10     | true
			192.168.1.10      | 192.168.1.11     | false
			192.168.1.10/32   | 192.168.1.10     | true
			0.0.0.0/0         | 203.0.113.9      | true
			0.0.0.0/0         | 2001:db8::1      | false
			10.0.0.0/9        | 10.127.0.1       | true
			10.0.0.0/9        | 10.128.0.1       | false
			::ffff:10.0.0.0/104 | 10.3.0.1       | true
			::ffff:10.0.0.0/104 | 11.3.0.1       | false
			::ffff:10.0.0.7   | 10.0.0.7         | true
			2001:db8::/32     | 2001:db8:ffff::1 | true
			2001:db8::/32     | 2001:db9::1      | false
			2001:db8::/32     | 10.0.0.1         | false
			fd00::/8          | fdab::1          | true
			::1               | 0:0:0:0:0:0:0:1  | true
			::1/128           | ::2              | false
			[::1]             | ::1              | true
			fe80::/10         | febf::1          | true
			fe80::/10         | fec0::1          | false
			""")
	void containsTheAddressesOfItsPrefix(String range, String address, boolean contained) {
		InetAddress parsed = IpAddresses.parse(address);
		assertThat(parsed).isNotNull();
		assertThat(AddressRange.parse(range).contains(parsed)).as(range + " contains " + address).isEqualTo(contained);
	}

	@Test
	void isWrittenAsItsNetworkAndPrefix() {
		assertThat(AddressRange.parse(" 10.1.2.3/8 ")).hasToString("10.0.0.0/8");
		assertThat(AddressRange.parse("2001:DB8:0:0::/32")).hasToString("2001:db8::/32");
		assertThat(AddressRange.parse("127.0.0.1")).hasToString("127.0.0.1/32")
			.isEqualTo(AddressRange.parse("127.0.0.1/32"));
	}

	@Test
	void aMalformedRangeSaysWhatIsWrong() {
		assertThatIllegalArgumentException().isThrownBy(() -> AddressRange.parse("10.0.0/8"))
			.withMessage("'10.0.0' is not an IP address");
		assertThatIllegalArgumentException().isThrownBy(() -> AddressRange.parse("proxy.internal"))
			.withMessage("'proxy.internal' is not an IP address");
		assertThatIllegalArgumentException().isThrownBy(() -> AddressRange.parse("10.0.0.0/33"))
			.withMessage("the prefix length 33 is more than the 32 bits of an IPv4 address");
		assertThatIllegalArgumentException().isThrownBy(() -> AddressRange.parse("2001:db8::/129"))
			.withMessage("the prefix length 129 is more than the 128 bits of an IPv6 address");
		assertThatIllegalArgumentException().isThrownBy(() -> AddressRange.parse("10.0.0.0/"))
			.withMessage("the prefix length '' after 10.0.0.0/ is not a number of bits");
		assertThatIllegalArgumentException().isThrownBy(() -> AddressRange.parse("10.0.0.0/8/8"))
			.withMessage("the prefix length '8/8' after 10.0.0.0/ is not a number of bits");
		assertThatIllegalArgumentException().isThrownBy(() -> AddressRange.parse("::ffff:10.0.0.0/8"))
			.withMessageContaining("must be at least 96");
		assertThatIllegalArgumentException().isThrownBy(() -> AddressRange.parse(""))
			.withMessage("'' is not an IP address");
	}

}
