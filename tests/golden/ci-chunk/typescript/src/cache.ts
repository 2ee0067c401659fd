/**
 * cache.ts: an in-memory cache with per-entry expiry and LRU eviction.
 */
import { EventEmitter } from "events";
import type { Clock, Key } from "./types";
import * as metrics from "./metrics";

/** What the cache keeps for each key. */
export interface Entry<V> {
  value: V;
  expiresAt: number;
  hits: number;
}

export type Loader<V> = (key: Key) => Promise<V>;

type Listener = (key: Key) => void;

export enum Policy {
  LRU = "lru",
  FIFO = "fifo",
}

const systemClock: Clock = { now: () => Date.now() };

export abstract class Store<V> {
  abstract get(key: Key): Entry<V> | undefined;
  abstract set(key: Key, entry: Entry<V>): void;
}

/** A cache of at most `capacity` entries. */
export class Cache<V> extends EventEmitter implements Iterable<[Key, V]> {
  private readonly entries = new Map<Key, Entry<V>>();

  constructor(
    private readonly capacity: number,
    private readonly ttlMs: number,
    private readonly clock: Clock = systemClock,
  ) {
    super();
  }

  get(key: Key): V | undefined {
    const e = this.entries.get(key);
    if (!e || e.expiresAt <= this.clock.now()) {
      this.entries.delete(key);
      return undefined;
    }
    e.hits++;
    // re-insert: a Map iterates in insertion order, oldest first
    this.entries.delete(key);
    this.entries.set(key, e);
    return e.value;
  }

  set(key: Key, value: V): this {
    if (this.entries.size >= this.capacity) {
      const oldest = this.entries.keys().next().value as Key;
      this.entries.delete(oldest);
      this.emit("evict", oldest);
    }
    this.entries.set(key, { value, expiresAt: this.clock.now() + this.ttlMs, hits: 0 });
    return this;
  }

  async getOrLoad(key: Key, load: Loader<V>): Promise<V> {
    const hit = this.get(key);
    if (hit !== undefined) {
      return hit;
    }
    const value = await load(key);
    this.set(key, value);
    metrics.count("cache.load");
    return value;
  }

  *[Symbol.iterator](): Iterator<[Key, V]> {
    for (const [k, e] of this.entries) {
      yield [k, e.value];
    }
  }
}

export function memoize<A extends Key, R>(fn: (a: A) => R, capacity = 100): (a: A) => R {
  const cache = new Cache<R>(capacity, Infinity);
  return (a: A) => {
    let r = cache.get(a);
    if (r === undefined) {
      r = fn(a);
      cache.set(a, r);
    }
    return r;
  };
}

export const onEvict = (c: Cache<unknown>, listener: Listener): void => {
  c.on("evict", listener);
};

export namespace Stats {
  export function hitRate(hits: number, misses: number): number {
    return hits + misses === 0 ? 0 : hits / (hits + misses);
  }
}
