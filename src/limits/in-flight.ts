/**
 * Things in flight (requests, event streams) counted per key, each key bounded. Pure bookkeeping:
 * the caller takes a slot before the work and gives it back, exactly once, when the work ends.
 * A key whose count falls to zero is forgotten, so the map holds only keys with work in flight.
 */
export class InFlight {
  readonly #held = new Map<string, number>();

  /** Takes a slot for `key` unless `max` are held already (max 0: no bound). */
  tryAcquire(key: string, max: number): boolean {
    const held = this.#held.get(key) ?? 0;
    if (max > 0 && held >= max) return false;
    this.#held.set(key, held + 1);
    return true;
  }

  release(key: string): void {
    const held = this.#held.get(key);
    if (held === undefined) return;
    if (held <= 1) this.#held.delete(key);
    else this.#held.set(key, held - 1);
  }

  /** Slots held for `key`. */
  held(key: string): number {
    return this.#held.get(key) ?? 0;
  }

  /** Keys with at least one slot held. */
  get keys(): number {
    return this.#held.size;
  }

  /** Slots held over all keys. */
  get total(): number {
    let sum = 0;
    for (const n of this.#held.values()) sum += n;
    return sum;
  }
}
