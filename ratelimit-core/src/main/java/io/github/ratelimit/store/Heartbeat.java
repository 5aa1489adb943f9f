package io.github.ratelimit.store;

/**
 * What the instances sharing a store know of each other, read in one call of a shared
 * store's heartbeat: how many are alive, and the versions of what they change together.
 *
 * @param instances the instances whose heartbeat the store saw recently, this one
 * included; at least 1
 * @param liveLimitsVersion the version of the live limit changes, which every change
 * increments
 * @param epoch a value the store keeps while it keeps its data: another one means the
 * store lost its data (restarted empty, flushed) since the last heartbeat
 * @param resets how many key resets the instances made: another number means that some
 * instance reset a key, so what the others remember of keys may be wrong
 * @author ratelimit-spring-boot-starter authors
 */
public record Heartbeat(int instances, long liveLimitsVersion, String epoch, long resets) {

}
