package io.github.ratelimit.expression;

import java.util.List;
import java.util.Optional;

import org.jspecify.annotations.Nullable;
import org.junit.jupiter.api.Test;

import org.springframework.expression.EvaluationContext;
import org.springframework.expression.Expression;
import org.springframework.expression.PropertyAccessor;
import org.springframework.expression.spel.SpelEvaluationException;
import org.springframework.expression.spel.SpelMessage;
import org.springframework.expression.spel.standard.SpelExpressionParser;
import org.springframework.expression.spel.support.ReflectivePropertyAccessor;
import org.springframework.expression.spel.support.StandardEvaluationContext;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatExceptionOfType;

/**
 * Tests for {@link CachingPropertyAccessor}: every read, write and failure is what SpEL's
 * {@link ReflectivePropertyAccessor} gives, also when one expression meets several
 * classes.
 *
 * @author ratelimit-spring-boot-starter authors
 */
class CachingPropertyAccessorTests {

	private final SpelExpressionParser parser = new SpelExpressionParser();

	private final CachingPropertyAccessor accessor = new CachingPropertyAccessor();

	@Test
	void gettersFieldsAndRecordComponentsShouldReadAsWithTheReflectiveAccessor() {
		for (String text : List.of("#v.name", "#v.active", "#v.count", "#v.label", "#v.name.length()")) {
			Expression expression = this.parser.parseExpression(text);
			Object value = new Widget("w", true, 3);
			assertThat(expression.getValue(context(this.accessor, value)))
				.isEqualTo(expression.getValue(context(new ReflectivePropertyAccessor(), value)));
		}
		assertThat(this.parser.parseExpression("#v.size").getValue(context(this.accessor, new Part(7)))).isEqualTo(7);
	}

	@Test
	void repeatedReadsShouldSeeEachTargetsOwnValue() {
		Expression expression = this.parser.parseExpression("#v.name");
		assertThat(expression.getValue(context(this.accessor, new Widget("a", true, 1)))).isEqualTo("a");
		assertThat(expression.getValue(context(this.accessor, new Widget("b", true, 1)))).isEqualTo("b");
	}

	@Test
	void oneExpressionShouldReadTheSamePropertyOfDifferentClasses() {
		Expression expression = this.parser.parseExpression("#v.name");
		assertThat(expression.getValue(context(this.accessor, new Widget("w", true, 1)))).isEqualTo("w");
		assertThat(expression.getValue(context(this.accessor, new Gadget("g")))).isEqualTo("g");
		assertThat(expression.getValue(context(this.accessor, new Widget("w2", true, 1)))).isEqualTo("w2");
	}

	@Test
	void unknownPropertyShouldFailAsWithTheReflectiveAccessor() {
		Expression expression = this.parser.parseExpression("#v.name");
		expression.getValue(context(this.accessor, new Widget("w", true, 1)));
		assertThatExceptionOfType(SpelEvaluationException.class)
			.isThrownBy(() -> expression.getValue(context(this.accessor, new Part(1))))
			.satisfies((ex) -> assertThat(ex.getMessageCode()).isEqualTo(SpelMessage.PROPERTY_OR_FIELD_NOT_READABLE));
	}

	@Test
	void getterThatThrowsShouldFailAsWithTheReflectiveAccessor() {
		Expression expression = this.parser.parseExpression("#v.broken");
		assertThatExceptionOfType(SpelEvaluationException.class)
			.isThrownBy(() -> expression.getValue(context(this.accessor, new Widget("w", true, 1))))
			.satisfies((ex) -> assertThat(ex.getMessageCode()).isEqualTo(SpelMessage.EXCEPTION_DURING_PROPERTY_READ));
	}

	@Test
	void staticPropertiesArrayLengthAndOptionalShouldRead() {
		assertThat(this.parser.parseExpression("T(java.lang.Integer).MAX_VALUE").getValue(context(this.accessor, null)))
			.isEqualTo(Integer.MAX_VALUE);
		assertThat(this.parser.parseExpression("#v.length").getValue(context(this.accessor, new int[3]))).isEqualTo(3);
		// Null-safe navigation looks into an Optional.
		assertThat(
				this.parser.parseExpression("#v?.name").getValue(context(this.accessor, Optional.of(new Gadget("o")))))
			.isEqualTo("o");
	}

	@Test
	void writesShouldGoThroughTheReflectiveAccessor() {
		Widget widget = new Widget("w", true, 1);
		this.parser.parseExpression("#v.name = 'renamed'").getValue(context(this.accessor, widget));
		assertThat(widget.getName()).isEqualTo("renamed");
	}

	private static EvaluationContext context(PropertyAccessor accessor, @Nullable Object value) {
		StandardEvaluationContext context = new StandardEvaluationContext();
		context.setPropertyAccessors(List.of(accessor));
		context.setVariable("v", value);
		return context;
	}

	/**
	 * A bean with a getter, a boolean getter, a public field and a getter that throws.
	 */
	public static class Widget {

		public final String label = "label";

		private String name;

		private final boolean active;

		private final int count;

		Widget(String name, boolean active, int count) {
			this.name = name;
			this.active = active;
			this.count = count;
		}

		public String getName() {
			return this.name;
		}

		public void setName(String name) {
			this.name = name;
		}

		public boolean isActive() {
			return this.active;
		}

		public int getCount() {
			return this.count;
		}

		public String getBroken() {
			throw new IllegalStateException("broken");
		}

	}

	/**
	 * Another class with a {@code name} property.
	 */
	public static class Gadget {

		private final String name;

		Gadget(String name) {
			this.name = name;
		}

		public String getName() {
			return this.name;
		}

	}

	/**
	 * A record: its component is read through the accessor method.
	 *
	 * @param size the size
	 */
	public record Part(int size) {

	}

}
