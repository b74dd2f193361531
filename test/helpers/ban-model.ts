import fc from 'fast-check';
import { banKeys } from '../../src/limits/keys.js';
import type { WindowRequest, WindowStore } from '../../src/store/window-store.js';

// A reference model of the penalty boxes (config `ban`) over fixed windows, and random scenarios
// of requests to hold a store against it (test/store/bans*.test.ts).

export interface LimiterSpec {
  readonly name: string;
  readonly limit: number;
  readonly periodMs: number;
  /** Absent: no ban. */
  readonly ban?: { readonly after: number; readonly withinMs: number; readonly forMs: number };
}

/** One request: the limiters it meets (one window each, keyed by `who`), after `advanceMs`. */
export interface Step {
  readonly who: string;
  readonly limiters: readonly number[];
  readonly advanceMs: number;
}

export interface Outcome {
  readonly banned: boolean;
  readonly allowed: readonly boolean[];
  readonly counts: readonly number[];
  readonly banStarted: readonly boolean[];
}

/** The requests of a step for the store: the window, and the limiter's ban on it. */
export function requestsOf(prefix: string, specs: readonly LimiterSpec[], step: Step): WindowRequest[] {
  return step.limiters.map((l) => {
    const s = specs[l]!;
    const key = `${prefix}{${step.who}}:${s.name}:${s.periodMs}:ip`;
    const w: WindowRequest = {
      key,
      limit: s.limit,
      periodMs: s.periodMs,
      enforce: true,
      cacheWhenSpent: false,
    };
    if (!s.ban) return w;
    return { ...w, ban: { ...banKeys(prefix, s.name, step.who), ...s.ban, span: 1 } };
  });
}

/**
 * Reference: a live ban of any of the request's limiters refuses it and counts nothing; else a
 * request passes when every window has room, and is counted everywhere; when refused, each limiter
 * whose own window was full takes a strike (counted for `within` from the first), the `after`-th
 * banning the key for `for` and forgetting the strikes. Time moves by each step's advance.
 */
export function model(specs: readonly LimiterSpec[], steps: readonly Step[]): Outcome[] {
  const windows = new Map<string, { count: number; resetAt: number }>();
  const strikes = new Map<string, { count: number; until: number }>();
  const bans = new Map<string, number>();
  let now = 0;
  return steps.map((step) => {
    now += step.advanceMs;
    const keys = step.limiters.map((l) => `${step.who}/${specs[l]!.name}`);
    const used = keys.map((k) => {
      const w = windows.get(k);
      return w && w.resetAt > now ? w.count : 0;
    });
    const allowed = step.limiters.map((l, i) => used[i]! + 1 <= specs[l]!.limit);
    const banned = step.limiters.some((l, i) => specs[l]!.ban && (bans.get(keys[i]!) ?? 0) > now);
    const blocked = banned || allowed.includes(false);
    const banStarted = step.limiters.map(() => false);
    if (!blocked) {
      keys.forEach((k, i) => {
        const w = windows.get(k);
        if (w && w.resetAt > now) w.count++;
        else windows.set(k, { count: 1, resetAt: now + specs[step.limiters[i]!]!.periodMs });
      });
    } else if (!banned) {
      step.limiters.forEach((l, i) => {
        const ban = specs[l]!.ban;
        if (!ban || allowed[i]) return;
        let s = strikes.get(keys[i]!);
        if (!s || s.until <= now) strikes.set(keys[i]!, (s = { count: 0, until: now + ban.withinMs }));
        if (++s.count >= ban.after) {
          strikes.delete(keys[i]!);
          bans.set(keys[i]!, now + ban.forMs);
          banStarted[i] = true;
        }
      });
    }
    const counts = keys.map((k, i) => (blocked ? used[i]! : windows.get(k)!.count));
    return { banned, allowed, counts, banStarted };
  });
}

/** The store's answers to the steps, in the model's shape; `advance` moves the store's clock. */
export async function replay(
  store: WindowStore,
  prefix: string,
  specs: readonly LimiterSpec[],
  steps: readonly Step[],
  advance: (ms: number) => void = () => undefined,
): Promise<Outcome[]> {
  const out: Outcome[] = [];
  for (const step of steps) {
    advance(step.advanceMs);
    const results = await store.hit(requestsOf(prefix, specs, step));
    out.push({
      banned: results.some((r) => r.bannedUntilMs !== undefined),
      allowed: results.map((r) => r.allowed),
      counts: results.map((r) => r.count),
      banStarted: results.map((r) => r.banStarted === true),
    });
  }
  return out;
}

/**
 * Two or three limiters (small limits, some with a ban) and requests of a few clients meeting one
 * or more of them. `timed`: durations of seconds and steps that move time; otherwise an hour each
 * and no time passes (a real Redis keeps its own clock).
 */
export function banScenario(timed: boolean) {
  const duration = timed ? fc.integer({ min: 1000, max: 5000 }) : fc.constant(3_600_000);
  const spec = (name: string) =>
    fc.record({
      name: fc.constant(name),
      limit: fc.integer({ min: 1, max: 3 }),
      periodMs: duration,
      ban: fc.option(
        fc.record({ after: fc.integer({ min: 1, max: 3 }), withinMs: duration, forMs: duration }),
        { nil: undefined },
      ),
    });
  const specs = fc.tuple(spec('l0'), spec('l1'), spec('l2'));
  const step = fc.record({
    who: fc.constantFrom('c1', 'c2'),
    limiters: fc
      .uniqueArray(fc.integer({ min: 0, max: 2 }), { minLength: 1, maxLength: 3 })
      .map((a) => a.sort()),
    advanceMs: timed ? fc.oneof(fc.constant(0), fc.integer({ min: 0, max: 3000 })) : fc.constant(0),
  });
  return fc.record({ specs, steps: fc.array(step, { minLength: 1, maxLength: 30 }) });
}
