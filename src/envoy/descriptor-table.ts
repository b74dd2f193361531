import { hashPart } from '../identity/hash.js';
import { banKeys, descriptorWindowKey, windowRequest } from '../limits/keys.js';
import { limiterWindows } from './descriptor-tier.js';
import type {
  CompiledLimiter,
  DescriptorEntry,
  DescriptorMatch,
  DescriptorMatcher,
  DescriptorPattern,
  RouteWindow,
} from '../rules/model.js';
import type { WindowRequest } from '../store/window-store.js';

export type { DescriptorEntry, DescriptorMatch } from '../rules/model.js';
export { descriptorWindowKey } from '../limits/keys.js';

interface CompiledPattern {
  readonly limiter: CompiledLimiter;
  /** Per entry, the value it must have; undefined: any value, counted per value. */
  readonly values: readonly (string | undefined)[];
}

/** The keys of a descriptor's entries in order: the first, exact, step of matching. */
const signature = (keys: readonly string[]) => keys.join('\0');

/**
 * A value as it goes into a budget's tag, joined by NULs: a NUL (gRPC strings may hold one) and the
 * backslash escaped, so ("a\0user=b", "c") and ("a", "b\0user=c") never share a budget.
 */
const escapeNul = (value: string) => value.replace(/[\\\0]/g, (c) => (c === '\0' ? '\\0' : '\\\\'));

/** A pattern's identity, to find two limiters claiming the same descriptors. */
export const patternId = (p: DescriptorPattern): string =>
  JSON.stringify([p.domain, ...p.entries.map((e) => [e.key, e.value ?? null])]);

/**
 * Envoy's descriptors mapped to the limiters that name them, compiled once per config. A
 * descriptor matches a pattern of the same domain with exactly its keys, in order, whose fixed
 * values it carries; the first limiter in config order wins. Its budget is keyed by the values of
 * the pattern's any-value entries, so each value is counted apart (and all patterns of one limiter
 * share the budget of a value).
 */
export class DescriptorTable implements DescriptorMatcher {
  /** domain → keys signature → patterns, in config order. */
  readonly #byDomain = new Map<string, Map<string, CompiledPattern[]>>();

  static compile(limiters: Iterable<CompiledLimiter>): DescriptorTable {
    const table = new DescriptorTable();
    for (const limiter of limiters) {
      for (const p of limiter.descriptors) {
        let bySignature = table.#byDomain.get(p.domain);
        if (!bySignature) table.#byDomain.set(p.domain, (bySignature = new Map()));
        const sig = signature(p.entries.map((e) => e.key));
        const list = bySignature.get(sig) ?? [];
        list.push({ limiter, values: p.entries.map((e) => e.value) });
        bySignature.set(sig, list);
      }
    }
    return table;
  }

  /** Whether any limiter answers descriptors at all. */
  get empty(): boolean {
    return this.#byDomain.size === 0;
  }

  /** The limiter answering this descriptor, with its budget's tag; undefined when none does. */
  match(domain: string, entries: readonly DescriptorEntry[]): DescriptorMatch | undefined {
    const candidates = this.#byDomain.get(domain)?.get(signature(entries.map((e) => e.key)));
    if (!candidates) return undefined;
    for (const { limiter, values } of candidates) {
      if (!values.every((v, i) => v === undefined || v === entries[i]!.value)) continue;
      // Keys and values both: "remote_address=1.2.3.4" and "user=1.2.3.4" are different budgets.
      const counted = entries
        .filter((_, i) => values[i] === undefined)
        .map((e) => `${e.key}=${escapeNul(e.value)}`);
      return { limiter, tag: hashPart(`descriptor\0${counted.join('\0')}`) };
    }
    return undefined;
  }
}

/** The windows of a planned rate-limit request: one store call for all its descriptors. */
export interface DescriptorPlan {
  /** What the store checks and counts; a window two descriptors share appears once, with both costs. */
  readonly requests: WindowRequest[];
  /** Per store request, its window (the first descriptor's that spends it), as the near-limit metrics read it. */
  readonly windows: RouteWindow[];
  /** Per descriptor: its limiter's windows and, for each, the index of its store request; undefined: unmatched. */
  readonly descriptors: readonly (readonly { window: RouteWindow; request: number }[] | undefined)[];
}

/**
 * Plans the store call of one rate-limit request: every window of every matched descriptor, each
 * costing `hits` (Envoy's hits_addend), at the limits `windowsOf` gives (the request's tier:
 * descriptor-tier.ts; a tier shares its window's key). Descriptors that spend the same budget are
 * merged, so the store sees their hits together rather than checking each against the count before the other.
 */
export function planDescriptors(
  matches: readonly (DescriptorMatch | undefined)[],
  hits: number,
  prefix: string,
  windowsOf: (limiter: CompiledLimiter) => readonly RouteWindow[] = limiterWindows,
): DescriptorPlan {
  const requests: WindowRequest[] = [];
  const windows: RouteWindow[] = [];
  const byKey = new Map<string, number>();
  const descriptors = matches.map((match) => {
    if (!match) return undefined;
    const { limiter } = match;
    return windowsOf(limiter).map((rw) => {
      const { index, window } = rw;
      const key = descriptorWindowKey(prefix, match, index);
      let request = byKey.get(key);
      if (request === undefined) {
        request = requests.length;
        byKey.set(key, request);
        windows.push(rw);
        const plain = windowRequest(limiter, window, key, hits);
        // [bans] an enforcing limiter's penalty box rides on its first window, as on HTTP (limits/plan.ts).
        const ban = index === 0 && !limiter.shadow ? limiter.ban : undefined;
        const keys = ban && banKeys(prefix, limiter.name, match.tag);
        const span = limiter.windows.length;
        requests.push(
          keys && ban
            ? { ...plain, ban: { ...keys, after: ban.after, withinMs: ban.withinMs, forMs: ban.forMs, span } }
            : plain,
        );
      } else {
        const merged = requests[request]!;
        requests[request] = { ...merged, cost: (merged.cost ?? 1) + hits };
      }
      return { window: rw, request };
    });
  });
  return { requests, windows, descriptors };
}
