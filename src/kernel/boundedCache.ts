import { type Clock, systemClock } from "./clock.js";

export interface BoundedCacheOptions {
  /** Past this many entries the least recently used goes: a spray of new keys never grows it. */
  maxEntries: number;
  /** Entries older than this (on the clock) read as absent; unset: they stay until evicted. */
  ttlMs?: number;
  clock?: Clock;
}

/**
 * A Map bounded by entry count (least recently used evicted first) with an optional time to live.
 * A Map iterates in insertion order, so re-inserting on every read keeps the oldest use first.
 */
export class BoundedCache<K, V> {
  private readonly entries = new Map<K, { value: V; until: number }>();
  private readonly maxEntries: number;
  private readonly ttlMs: number;
  private readonly clock: Clock;

  constructor(options: BoundedCacheOptions) {
    if (!Number.isInteger(options.maxEntries) || options.maxEntries < 1)
      throw new RangeError(`maxEntries must be a positive integer, got ${options.maxEntries}`);
    this.maxEntries = options.maxEntries;
    this.ttlMs = options.ttlMs ?? Number.POSITIVE_INFINITY;
    this.clock = options.clock ?? systemClock;
  }

  get size(): number {
    return this.entries.size;
  }

  /** The live value under `key` (now the most recently used), or undefined. */
  get(key: K): V | undefined {
    const entry = this.entries.get(key);
    if (entry === undefined) return undefined;
    this.entries.delete(key);
    if (entry.until <= this.clock.now()) return undefined;
    this.entries.set(key, entry);
    return entry.value;
  }

  /** Whether `key` is live, without making it more recently used. */
  has(key: K): boolean {
    const entry = this.entries.get(key);
    return entry !== undefined && entry.until > this.clock.now();
  }

  /** `asOf`: when the value was read, if earlier than now; its time to live counts from then. */
  set(key: K, value: V, asOf: number = this.clock.now()): this {
    this.entries.delete(key);
    this.entries.set(key, { value, until: asOf + this.ttlMs });
    if (this.entries.size > this.maxEntries) {
      const oldest = this.entries.keys().next();
      if (!oldest.done) this.entries.delete(oldest.value);
    }
    return this;
  }

  /** Adds `key` unless it is live already; false when it was (for remembering what was seen). */
  add(key: K, value: V): boolean {
    if (this.has(key)) return false;
    this.set(key, value);
    return true;
  }

  delete(key: K): boolean {
    return this.entries.delete(key);
  }

  /** Drops every entry whose value matches (a revocation finding its cached answers). */
  deleteWhere(matches: (value: V, key: K) => boolean): void {
    for (const [key, entry] of this.entries) if (matches(entry.value, key)) this.entries.delete(key);
  }

  clear(): void {
    this.entries.clear();
  }
}
