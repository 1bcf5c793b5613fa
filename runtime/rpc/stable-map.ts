// A Map for small registries that often empty out: one hidden entry keeps V8 from reallocating its table on every request.
/**
 * Why: V8 shrinks a Map's hash table when deletes leave it under a quarter full, and grows it again on the next
 * insert. A registry that swings between one entry and none (the requests in flight of a caller that makes one
 * at a time) paid for two table allocations per request. The hidden entry means it never gets that empty.
 * The rest is a plain Map, minus the hidden entry in `size` and in iteration.
 */
const HOLD: unique symbol = Symbol("mcpgen.stable-map.hold");

export class StableMap<K, V> implements Iterable<[K, V]> {
  private readonly map = new Map<K | typeof HOLD, V | undefined>([[HOLD, undefined]]);

  get size(): number {
    return this.map.size - 1;
  }

  get(key: K): V | undefined {
    return this.map.get(key) as V | undefined;
  }

  has(key: K): boolean {
    return this.map.has(key);
  }

  set(key: K, value: V): this {
    this.map.set(key, value);
    return this;
  }

  delete(key: K): boolean {
    return this.map.delete(key);
  }

  clear(): void {
    this.map.clear();
    this.map.set(HOLD, undefined);
  }

  *keys(): IterableIterator<K> {
    for (const key of this.map.keys()) if (key !== HOLD) yield key as K;
  }

  *values(): IterableIterator<V> {
    for (const [key, value] of this.map) if (key !== HOLD) yield value as V;
  }

  *entries(): IterableIterator<[K, V]> {
    for (const [key, value] of this.map) if (key !== HOLD) yield [key as K, value as V];
  }

  [Symbol.iterator](): IterableIterator<[K, V]> {
    return this.entries();
  }
}
