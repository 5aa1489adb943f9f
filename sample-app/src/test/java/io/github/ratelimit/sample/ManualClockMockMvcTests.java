package io.github.ratelimit.sample;

import java.time.Duration;

import org.junit.jupiter.api.BeforeEach;

import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.context.SpringBootTest.WebEnvironment;
import org.springframework.boot.webmvc.test.autoconfigure.AutoConfigureMockMvc;
import org.springframework.context.annotation.Import;
import org.springframework.test.web.servlet.MockMvc;
import org.springframework.test.web.servlet.request.RequestPostProcessor;

import io.github.ratelimit.ManualTimeSource;

/**
 * The sample application with MockMvc and a manual clock. Subclasses that add no
 * configuration of their own share one application context; each test starts on a fresh
 * hour, so no limit state carries over from another test.
 */
@SpringBootTest(webEnvironment = WebEnvironment.MOCK)
@AutoConfigureMockMvc
@Import(ManualClockConfiguration.class)
abstract class ManualClockMockMvcTests {

	@Autowired
	protected MockMvc mvc;

	@Autowired
	protected ManualTimeSource clock;

	@BeforeEach
	void startFresh() {
		ManualClockConfiguration.startFresh(this.clock);
	}

	/**
	 * Sends the request from a client address (MockMvc's default is 127.0.0.1).
	 * @param address the client IP
	 * @return the post-processor
	 */
	static RequestPostProcessor from(String address) {
		return (request) -> {
			request.setRemoteAddr(address);
			return request;
		};
	}

	void advance(Duration duration) {
		this.clock.advance(duration);
	}

}
