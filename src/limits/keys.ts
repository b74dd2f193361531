/**
 * The key scheme, in one place: every store key, WindowRequest and policy name, for HTTP requests
 * and for Envoy's descriptors alike. The keys are what Redis holds: changing one resets counters.
 */
import type {
  CompiledLimiter,
  CompiledWindow,
  KeyPart,
  RouteWindow,
  WindowAlgorithm,
} from '../rules/model.js';
import type { WindowRequest } from '../store/window-store.js';

/** The hashed value of each key part for one request (credential parts already replaced by their fallback). */
export type PartValues = (part: KeyPart) => string;

/**
 * A window's period in its store key: the period in ms for a fixed window (as before the other
 * algorithms), with ".sliding" or ".token-bucket" after it for the others. So a reload that
 * changes a window's algorithm starts it on fresh keys: no state of one algorithm is read as another's.
 */
export const periodSegment = (
  periodMs: number,
  algorithm: WindowAlgorithm = 'fixed',
  calendar = false,
): string =>
  algorithm === 'fixed' ? (calendar ? `${periodMs}.calendar` : String(periodMs)) : `${periodMs}.${algorithm}`;

/** The constant middle of a window's HTTP store key, ":<limiter>:<period>:<parts>", built once per config. */
export const keyStem = (
  limiter: string,
  periodMs: number,
  parts: readonly KeyPart[],
  algorithm: WindowAlgorithm = 'fixed',
  calendar = false,
): string => `:${limiter}:${periodSegment(periodMs, algorithm, calendar)}:${parts.join('+')}`;

/** A window's name in the IETF RateLimit headers: "<limiter>.<index>". */
export const policyName = (limiter: CompiledLimiter, index: number): string => `${limiter.name}.${index}`;

/** One window of one limiter, with its policy name. */
export const routeWindow = (
  limiter: CompiledLimiter,
  index: number,
  window: CompiledWindow,
): RouteWindow => ({
  limiter,
  index,
  window,
  policyName: policyName(limiter, index),
});

/**
 * The store key of one window: `<prefix>{<tag>}:<limiter>:<period>:<parts>:<other values>`.
 * The tag (in braces, a Redis Cluster hash tag) is the part every window of the limiter shares,
 * so one limiter's windows always land in one slot. The limit is not in the key: changing a
 * limit applies at once to the running counters. A calendar window's key ends with
 * `@<start of its period, epoch ms>`, so it rolls over at the boundary.
 */
export function windowKey(
  prefix: string,
  limiter: CompiledLimiter,
  windowIndex: number,
  values: PartValues,
  nowMs?: number,
): string {
  const w = limiter.windows[windowIndex]!;
  // A route's limiters always name key parts (the config loader refuses others on a route).
  const tag = values(limiter.tagPart!);
  if (w.otherParts.length === 0 && !w.calendar) return builtKey(prefix, tag, w.keyStem);
  let key = `${prefix}{${tag}}${w.keyStem}`;
  for (const part of w.otherParts) key += `:${values(part)}`;
  if (w.calendar) key += `@${w.calendar.periodAt(nowMs ?? Date.now()).startMs}`;
  return key;
}

/**
 * The keys of one-part windows already built, by stem, then by tag value (for one prefix at a
 * time): a client's key is concatenated, flattened and hashed (on its first Map lookup) once,
 * not on every request. A stem's map is cleared when it holds KEYS_PER_STEM keys, and all of
 * them when STEMS are held (reloads that rename limiters leave stems no window uses), so the
 * cache stays bounded whatever the traffic and however many reloads.
 */
const KEYS_PER_STEM = 4096;
const STEMS = 256;
const builtKeys = new Map<string, Map<string, string>>();
let builtPrefix: string | undefined;

function builtKey(prefix: string, tag: string, stem: string): string {
  if (prefix !== builtPrefix) {
    builtKeys.clear();
    builtPrefix = prefix;
  }
  let keys = builtKeys.get(stem);
  if (keys === undefined) {
    if (builtKeys.size >= STEMS) builtKeys.clear();
    builtKeys.set(stem, (keys = new Map()));
  }
  let key = keys.get(tag);
  if (key === undefined) {
    if (keys.size >= KEYS_PER_STEM) keys.clear();
    keys.set(tag, (key = `${prefix}{${tag}}${stem}`));
  }
  return key;
}

/** How many built keys the cache holds, over all stems (for the bound's test). */
export function builtKeysHeld(): number {
  let held = 0;
  for (const keys of builtKeys.values()) held += keys.size;
  return held;
}

/**
 * The store key of one window of a descriptor's budget: `<prefix>{<tag>}:<limiter>:<period>:descriptor`.
 * Apart from the keys of HTTP requests (`...:<period>:<parts>...`), so the two never share a counter.
 */
export function descriptorWindowKey(
  prefix: string,
  match: { readonly limiter: CompiledLimiter; readonly tag: string },
  windowIndex: number,
): string {
  const w = match.limiter.windows[windowIndex]!;
  const key = `${prefix}{${match.tag}}:${match.limiter.name}:${periodSegment(w.periodMs, w.algorithm, !!w.calendar)}:descriptor`;
  return w.calendar ? `${key}@${w.calendar.periodAt(Date.now()).startMs}` : key;
}

/**
 * The store keys of a limiter's penalty box for one key (the value of its hash-tag part):
 * `<prefix>{<tag>}:<limiter>:ban` and `...:strikes`, in the slot of the limiter's windows. Never a
 * window's key: those have a period after the limiter's name.
 */
export const banKeys = (prefix: string, limiter: string, tag: string) => ({
  key: `${prefix}{${tag}}:${limiter}:ban`,
  strikesKey: `${prefix}{${tag}}:${limiter}:strikes`,
});

/** A ban key taken apart (the admin API's listing): its limiter and tag; undefined when it is none. */
export function parseBanKey(prefix: string, key: string): { limiter: string; tag: string } | undefined {
  if (!key.startsWith(`${prefix}{`) || !key.endsWith(':ban')) return undefined;
  const close = key.indexOf('}:', prefix.length);
  if (close === -1) return undefined;
  const limiter = key.slice(close + 2, -':ban'.length);
  return limiter ? { limiter, tag: key.slice(prefix.length + 1, close) } : undefined;
}

/** What the store checks and counts for one window of a limiter under `key`; `cost` left out: 1. */
export function windowRequest(
  limiter: CompiledLimiter,
  window: CompiledWindow,
  key: string,
  cost?: number,
  nowMs?: number,
): WindowRequest {
  const enforce = !limiter.shadow;
  // A limiter with a ban skips the over-limit cache: every refusal must reach the store as a strike.
  const cacheWhenSpent = enforce && limiter.overLimitCache && limiter.ban === undefined;
  if (window.calendar) {
    // Counted as a fixed window that lives until the boundary (the key names the period).
    const now = nowMs ?? Date.now();
    const endsAtMs = window.calendar.periodAt(now).endMs;
    const periodMs = Math.max(1, endsAtMs - now);
    const base = { key, limit: window.limit, periodMs, enforce, cacheWhenSpent, endsAtMs };
    const priced = cost === undefined ? base : { ...base, cost };
    return window.lease ? { ...priced, lease: window.lease } : priced; // [lease]
  }
  const { periodMs } = window;
  if (window.algorithm === 'fixed') {
    // [lease] a leased window carries its lease (the leasing store spends it in process).
    if (window.lease) {
      const { lease } = window;
      return cost === undefined
        ? { key, limit: window.limit, periodMs, enforce, cacheWhenSpent, lease }
        : { key, limit: window.limit, periodMs, enforce, cacheWhenSpent, cost, lease };
    }
    // Two literals: the HTTP path's fixed windows carry no cost property at all, as before.
    return cost === undefined
      ? { key, limit: window.limit, periodMs, enforce, cacheWhenSpent }
      : { key, limit: window.limit, periodMs, enforce, cacheWhenSpent, cost };
  }
  const shaped =
    window.algorithm === 'sliding'
      ? { key, limit: window.limit, periodMs, enforce, cacheWhenSpent, algorithm: 'sliding' as const }
      : {
          key,
          limit: window.burst,
          periodMs,
          enforce,
          cacheWhenSpent,
          algorithm: 'token-bucket' as const,
          rate: window.limit,
        };
  return cost === undefined ? shaped : { ...shaped, cost };
}
