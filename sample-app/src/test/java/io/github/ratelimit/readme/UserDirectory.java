package io.github.ratelimit.readme;

/**
 * Checks passwords, for the login example.
 */
public interface UserDirectory {

	/**
	 * Checks a password.
	 * @param username the user
	 * @param password the password given
	 * @return whether it is the user's password
	 */
	boolean check(String username, String password);

}
