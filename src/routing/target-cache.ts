import { canonicalTarget, type CanonicalTarget } from './request-target.js';

/**
 * canonicalTarget of the raw targets seen lately, so a client repeating its target (every
 * keep-alive client, every flood) gets the canonical form without its regular expressions,
 * lower-casing and allocation. Clients choose their targets, so the cache is bounded: at most
 * MAX_TARGETS entries, cleared when full, and targets longer than MAX_TARGET_LENGTH are not kept.
 * The result is the function's own (it is pure); only the object is shared, and it is read-only.
 */
export const MAX_TARGETS = 1024;
export const MAX_TARGET_LENGTH = 256;

export class TargetCache {
  readonly #targets = new Map<string, CanonicalTarget>();

  constructor(
    readonly maxTargets = MAX_TARGETS,
    readonly maxLength = MAX_TARGET_LENGTH,
  ) {}

  get size(): number {
    return this.#targets.size;
  }

  /** canonicalTarget(raw), from the cache when raw was seen since it was last cleared. */
  of(raw: string): CanonicalTarget {
    const known = this.#targets.get(raw);
    if (known !== undefined) return known;
    const target = canonicalTarget(raw);
    if (raw.length > this.maxLength) return target;
    if (this.#targets.size >= this.maxTargets) this.#targets.clear();
    this.#targets.set(raw, target);
    return target;
  }
}

/** The process's cache, for the listeners' request paths. */
const shared = new TargetCache();

/** canonicalTarget(raw), cached (bounded): the request path's spelling of it. */
export const canonicalTargetOf = (raw: string): CanonicalTarget => shared.of(raw);
