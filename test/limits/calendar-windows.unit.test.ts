// Calendar windows from a config to the store: the key names the period's start, the window lives
// until the boundary (Reset), rolls over there, and the schema refuses what has no calendar meaning.
import { describe, expect, test } from 'vitest';
import type { ConfigError } from '../../src/config/errors.js';
import { descriptorWindowKey } from '../../src/limits/keys.js';
import { planWindows } from '../../src/limits/plan.js';
import { loadConfigText } from '../../src/rules/load.js';
import { MemoryStore } from '../../src/store/memory-store.js';

const yaml = (window: string) => `
listeners: [{ host: 127.0.0.1, port: 0 }]
upstreams: { app: { url: "http://127.0.0.1:9" } }
limiters:
  quota: { windows: [${window}] }
routes: [{ name: r, paths: ["/*"], upstream: app, limiters: [quota] }]
`;
const routeOf = (window: string) => loadConfigText(yaml(window), 't.yaml', {}).routes[0]!;
const issuesOf = (window: string) => {
  try {
    loadConfigText(yaml(window), 't.yaml', {});
  } catch (err) {
    return (err as ConfigError).issues.map((i) => `${i.path.join('.')}: ${i.message}`);
  }
  return [];
};
const ip = () => 'IPHASH';

describe('calendar windows', () => {
  test('a Berlin day: the key names its start, the window lives to midnight, then rolls over', async () => {
    const route = routeOf('{ limit: 2, period: 1d, align: calendar, timeZone: Europe/Berlin, key: [ip] }');
    let now = Date.UTC(2026, 2, 28, 22, 30); // 23:30 in Berlin, on the day before DST begins
    const store = new MemoryStore({ maxKeys: 100, sweepIntervalMs: 60_000, now: () => now });
    const plan = () => planWindows(route.windows, ip, 'p:', now);
    const start = Date.UTC(2026, 2, 27, 23);
    const end = Date.UTC(2026, 2, 28, 23);
    expect(plan()).toEqual([
      {
        key: `p:{IPHASH}:quota:86400000.calendar:ip@${start}`,
        limit: 2,
        periodMs: end - now,
        enforce: true,
        cacheWhenSpent: true,
        endsAtMs: end,
      },
    ]);
    expect(await store.hit(plan())).toEqual([{ count: 1, limit: 2, resetAtMs: end, allowed: true }]);
    now += 10 * 60_000;
    expect(await store.hit(plan())).toEqual([{ count: 2, limit: 2, resetAtMs: end, allowed: true }]);
    expect(await store.hit(plan())).toEqual([{ count: 2, limit: 2, resetAtMs: end, allowed: false }]);
    now = end - 1;
    expect((await store.hit(plan()))[0]!.allowed).toBe(false);
    now = end; // midnight in Berlin: a new day of 23 hours
    const next = plan()[0]!;
    expect(next.key).toBe(`p:{IPHASH}:quota:86400000.calendar:ip@${end}`);
    expect(next.endsAtMs! - end).toBe(23 * 3_600_000);
    expect(await store.hit([next])).toEqual([
      { count: 1, limit: 2, resetAtMs: next.endsAtMs, allowed: true },
    ]);
    store.sweep(end + 1); // the old day's window is gone
    expect(store.size).toBe(1);
    await store.close();
  });

  test('a UTC month and a Sunday-first week: real lengths', () => {
    const now = Date.UTC(2028, 1, 29, 12); // a leap day
    const month = planWindows(
      routeOf('{ limit: 9, period: 1mo, align: calendar, key: [ip] }').windows,
      ip,
      '',
      now,
    );
    expect(month[0]!.key).toBe(`{IPHASH}:quota:2629800000.calendar:ip@${Date.UTC(2028, 1, 1)}`);
    expect(month[0]!.endsAtMs).toBe(Date.UTC(2028, 2, 1));
    const week = planWindows(
      routeOf('{ limit: 9, period: 1w, align: calendar, weekStart: sunday, key: [ip] }').windows,
      ip,
      '',
      now,
    );
    expect(week[0]!.key).toBe(`{IPHASH}:quota:604800000.calendar:ip@${Date.UTC(2028, 1, 27)}`);
    expect(week[0]!.periodMs).toBe(Date.UTC(2028, 2, 5) - now);
  });

  test("an Envoy descriptor's calendar budget: the key names the period too", () => {
    const limiter = routeOf('{ limit: 9, period: 1d, align: calendar, key: [ip] }').limiters[0]!;
    const before = Date.now();
    const key = descriptorWindowKey('p:', { limiter, tag: 'T' }, 0);
    const days = [before, Date.now()].map((t) => Math.floor(t / 86_400_000) * 86_400_000);
    expect(days.map((d) => `p:{T}:quota:86400000.calendar:descriptor@${d}`)).toContain(key);
  });

  test('the schema refuses what has no calendar meaning', () => {
    expect(issuesOf('{ limit: 1, period: 1d, align: calendar, algorithm: sliding, key: [ip] }')).toEqual([
      'limiters.quota.windows.0.align: align: calendar applies to algorithm: fixed only (a sliding window has no calendar boundary)',
    ]);
    expect(issuesOf('{ limit: 1, period: 2d, align: calendar, key: [ip] }')).toEqual([
      'limiters.quota.windows.0.period: align: calendar needs period 1d, 1w or 1mo',
    ]);
    expect(issuesOf('{ limit: 1, period: 1d, align: calendar, timeZone: Mars/Base, key: [ip] }')).toEqual([
      'limiters.quota.windows.0.timeZone: unknown time zone "Mars/Base" (an IANA name, e.g. Europe/Berlin)',
    ]);
    expect(issuesOf('{ limit: 1, period: 1d, align: calendar, weekStart: sunday, key: [ip] }')).toEqual([
      'limiters.quota.windows.0.weekStart: weekStart applies to period 1w only',
    ]);
    expect(issuesOf('{ limit: 1, period: 1d, timeZone: UTC, key: [ip] }')).toEqual([
      'limiters.quota.windows.0.timeZone: timeZone applies to align: calendar only',
    ]);
  });
});
