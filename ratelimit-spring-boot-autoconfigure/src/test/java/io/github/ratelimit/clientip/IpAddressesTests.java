package io.github.ratelimit.clientip;

import java.net.InetAddress;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.junit.jupiter.params.provider.ValueSource;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Tests for {@link IpAddresses}: one written form per address, however it was written,
 * and no name lookups.
 *
 * @author ratelimit-spring-boot-starter authors
 */
class IpAddressesTests {

	@ParameterizedTest
	@CsvSource(delimiter = '|', textBlock = """
			10.0.0.7                                | 10.0.0.7
			0.0.0.0                                 | 0.0.0.0
			255.255.255.255                         | 255.255.255.255
			::ffff:10.0.0.7                         | 10.0.0.7
			::FFFF:10.0.0.7                         | 10.0.0.7
			0:0:0:0:0:ffff:a00:7                    | 10.0.0.7
			[::ffff:10.0.0.7]                       | 10.0.0.7
			2001:db8::1                             | 2001:db8::1
			2001:0DB8:0000:0000:0000:0000:0000:0001 | 2001:db8::1
			2001:db8:0:0:0:0:0:1                    | 2001:db8::1
			[2001:db8::1]                           | 2001:db8::1
			0:0:0:0:0:0:0:1                         | ::1
			::                                      | ::
			fe80::1%eth0                            | fe80::1
			fe80::1%25                              | fe80::1
			[fe80::1%eth0]                          | fe80::1
			2001:db8:0:1:0:0:0:1                    | 2001:db8:0:1::1
			2001:0:0:1:0:0:0:1                      | 2001:0:0:1::1
			2001:db8:1:2:3:4:5:6                    | 2001:db8:1:2:3:4:5:6
			2001:db8:0:2:3:4:5:6                    | 2001:db8:0:2:3:4:5:6
			fe80:0:0:0:0:0:0:0                      | fe80::
			""")
	void anAddressHasOneWrittenForm(String written, String expected) {
		InetAddress address = IpAddresses.parse(written);
		assertThat(address).as(written).isNotNull();
		assertThat(IpAddresses.format(address)).isEqualTo(expected);
	}

	@ParameterizedTest
	@ValueSource(strings = { "", " ", "localhost", "example.com", "unknown", "_hidden", "10.0.0", "10.0.0.7.1",
			"10.0.0.256", "010.0.0.7", "10.0.0.07", "1e.0.0.7", "+10.0.0.7", "10.0.0.7%eth0", "10..0.7", ".10.0.0",
			"2001:db8::1::2", "2001:db8:::1", "12345::1", "g::1", "[::1", "::1]", "[]", "::ffff:10.0.0", "10.0.0.7/8",
			"10.0.0.7:80", "0x0a.0.0.7" })
	void anythingButAnAddressLiteralIsNone(String text) {
		assertThat(IpAddresses.parse(text)).isNull();
	}

	@Test
	void aNameIsNeverLookedUp() {
		// A host name that resolves (to the loopback address) is still no literal.
		assertThat(IpAddresses.parse("localhost")).isNull();
		assertThat(IpAddresses.parse("[localhost]")).isNull();
	}

}
