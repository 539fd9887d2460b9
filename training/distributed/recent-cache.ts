// The caches of a worker thread's processors (rollout actors, checkpoint agents): a Map kept in
// order of use, trimmed to a bound, what it drops released.

/** Puts `value` under `key` as the most recently used entry of `cache` (a Map iterates oldest first). */
export function useEntry<K, V>(cache: Map<K, V>, key: K, value: V): void {
  cache.delete(key);
  cache.set(key, value);
}

/** Drops the least recently used entries past `max`, except those in `keep`, calling `release` on each. */
export function trimCache<K, V>(cache: Map<K, V>, max: number, release: (value: V) => void, keep?: ReadonlySet<K>): void {
  for (const [key, value] of cache) {
    if (cache.size <= max) break;
    if (keep?.has(key)) continue;
    cache.delete(key);
    release(value);
  }
}
