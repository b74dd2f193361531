/**
 * The space-saving sketch (Metwally, Agrawal, El Abbadi 2005): the heaviest keys of a stream in
 * `capacity` counters. A new key, when all counters are taken, replaces the smallest one and
 * inherits its count as `error`. So every key seen more than N / capacity times is in the sketch,
 * and a count overestimates the key's true count by at most its `error` (≤ the smallest count).
 * Memory is bounded whatever the stream; an offer is one Map lookup, plus a scan of the counters
 * when a new key evicts one.
 */
export interface HeavyKey {
  readonly key: string;
  /** Hits counted for the key (an overestimate by at most `error`). */
  readonly count: number;
  /** What the key inherited when it took another key's counter. */
  readonly error: number;
}

interface Slot {
  key: string;
  count: number;
  error: number;
}

export class SpaceSaving {
  readonly #slots: Slot[] = [];
  readonly #byKey = new Map<string, Slot>();
  /** Hits offered in all. */
  total = 0;

  constructor(readonly capacity: number) {
    if (!Number.isInteger(capacity) || capacity < 1) throw new Error('capacity must be a positive integer');
  }

  offer(key: string, weight = 1): void {
    this.total += weight;
    const slot = this.#byKey.get(key);
    if (slot !== undefined) {
      slot.count += weight;
      return;
    }
    if (this.#slots.length < this.capacity) {
      const fresh = { key, count: weight, error: 0 };
      this.#slots.push(fresh);
      this.#byKey.set(key, fresh);
      return;
    }
    let min = this.#slots[0]!;
    for (const s of this.#slots) if (s.count < min.count) min = s;
    // Reused in place: no allocation once the sketch is full.
    this.#byKey.delete(min.key);
    min.error = min.count;
    min.count += weight;
    min.key = key;
    this.#byKey.set(key, min);
  }

  /** The smallest count held (0 while a counter is free): no key outside the sketch was seen more often. */
  get minCount(): number {
    if (this.#slots.length < this.capacity) return 0;
    let min = Infinity;
    for (const s of this.#slots) if (s.count < min) min = s.count;
    return min;
  }

  /** The keys held, heaviest first (ties by key, for a stable order). */
  top(): HeavyKey[] {
    return this.#slots
      .map(({ key, count, error }) => ({ key, count, error }))
      .sort((a, b) => b.count - a.count || (a.key < b.key ? -1 : a.key > b.key ? 1 : 0));
  }
}
