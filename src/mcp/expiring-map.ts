/**
 * A map whose entries expire `ttlMs` after they were set and which never holds more than
 * `maxEntries` (the oldest go first): the plan service's memory of recent creates and iteration
 * links, which a long-lived server would otherwise grow by one entry per `plan_create` for good.
 * Only what is still read is kept: a dedupe entry is worth nothing after its window.
 */
export interface ExpiringMapOptions {
  /** How long an entry lives after it was set, in the clock's ms. */
  ttlMs: number;
  /** At most this many entries; setting one more drops the oldest. */
  maxEntries: number;
  /** Epoch ms (the service's clock). */
  now: () => number;
}

export class ExpiringMap<K, V> {
  /** In the order they were set (a set moves its key to the end), so the oldest come first. */
  private readonly entries = new Map<K, { value: V; at: number }>();

  constructor(private readonly options: ExpiringMapOptions) {
    if (!(options.ttlMs >= 0) || !Number.isInteger(options.maxEntries) || options.maxEntries < 1)
      throw new RangeError(`ExpiringMap needs ttlMs ≥ 0 and an integer maxEntries ≥ 1`);
  }

  get size(): number {
    return this.entries.size;
  }

  get(key: K): V | undefined {
    const entry = this.entries.get(key);
    if (!entry) return undefined;
    if (this.expired(entry.at)) {
      this.entries.delete(key);
      return undefined;
    }
    return entry.value;
  }

  has(key: K): boolean {
    return this.get(key) !== undefined;
  }

  set(key: K, value: V): this {
    this.entries.delete(key);
    this.entries.set(key, { value, at: this.options.now() });
    this.prune();
    return this;
  }

  delete(key: K): boolean {
    return this.entries.delete(key);
  }

  /** Drops the expired entries at the front, then the oldest beyond `maxEntries`. */
  private prune(): void {
    for (const [key, entry] of this.entries) {
      if (this.entries.size <= this.options.maxEntries && !this.expired(entry.at)) break;
      this.entries.delete(key);
    }
  }

  /**
   * An entry set at `at` has lived past `ttlMs`. One that seems set in the future (the clock stepped
   * back) still lives: a dedupe must not miss because of NTP, and `maxEntries` bounds the memory.
   */
  private expired(at: number): boolean {
    return this.options.now() - at > this.options.ttlMs;
  }
}
