// Property: against a fixed-window server (the gateway's semantics), calls arriving in random
// bursts all succeed, never more than the limit goes into a window, and a window costs at most one
// 429, and none at all when the client alone spends it. Driven on a manual clock.
import fc from 'fast-check';
import { expect, test } from 'vitest';
import { RateLimitedFetch } from '../../src/rate-limited-fetch.js';
import { ManualClock } from '../helpers/clocks.js';

const T0 = 1_800_000_000_000;

/** Fixed windows as the gateway counts them: refused requests are not counted. */
function windowServer(clock: ManualClock, limit: number, periodMs: number) {
  let window: { count: number; resetAtMs: number } | undefined;
  const sent = new Map<number, number>();
  const refused = new Map<number, number>();
  const bump = (m: Map<number, number>, k: number) => m.set(k, (m.get(k) ?? 0) + 1);
  const hit = (): Response => {
    const now = clock.now();
    if (!window || window.resetAtMs <= now) window = { count: 0, resetAtMs: now + periodMs };
    const headers = {
      'x-ratelimit-limit': String(limit),
      'x-ratelimit-reset': String(Math.ceil(window.resetAtMs / 1000)),
    };
    if (window.count >= limit) {
      bump(refused, window.resetAtMs);
      const retryAfter = String(Math.max(1, Math.ceil((window.resetAtMs - now) / 1000)));
      return new Response(null, {
        status: 429,
        headers: { ...headers, 'x-ratelimit-remaining': '0', 'retry-after': retryAfter },
      });
    }
    window.count++;
    bump(sent, window.resetAtMs);
    return new Response(null, {
      status: 204,
      headers: { ...headers, 'x-ratelimit-remaining': String(limit - window.count) },
    });
  };
  return { hit, sent, refused };
}

const settle = async () => {
  for (let i = 0; i < 10; i++) await new Promise((r) => setImmediate(r));
};

test('bursts against a fixed window: all succeed, at most one 429 per window', async () => {
  await fc.assert(
    fc.asyncProperty(
      fc.integer({ min: 1, max: 8 }),
      fc.constantFrom(1000, 2000, 60_000),
      fc.integer({ min: 0, max: 8 }),
      fc.array(
        fc.record({ afterMs: fc.integer({ min: 0, max: 130_000 }), size: fc.integer({ min: 1, max: 12 }) }),
        {
          minLength: 1,
          maxLength: 5,
        },
      ),
      async (limit, periodMs, foreign, bursts) => {
        const clock = new ManualClock(T0);
        const server = windowServer(clock, limit, periodMs);
        // Another caller behind the same address spends part of the first window first.
        for (let i = 0; i < foreign; i++) server.hit();
        const foreignSent = new Map(server.sent);
        server.refused.clear(); // the other caller's own 429s are not the client's
        const http = new RateLimitedFetch({ clock, fetch: async () => server.hit(), maxRetries: 1000 });
        const statuses: number[] = [];
        let pending = 0;
        /** Runs the clock to `untilMs`, waking every sleep on the way and letting answers arrive. */
        const runUntil = async (untilMs: number) => {
          for (;;) {
            await settle();
            const next = clock.sleeping[0];
            if (next === undefined || next > untilMs) break;
            await clock.advance(next - clock.now());
          }
          await clock.advance(Math.max(0, untilMs - clock.now()));
          await settle();
        };
        for (const burst of bursts) {
          await runUntil(clock.now() + burst.afterMs);
          for (let i = 0; i < burst.size; i++) {
            pending++;
            void http.fetch('https://api.test/x', { method: 'POST', body: 'b' }).then((r) => {
              statuses.push(r.status);
              pending--;
            });
          }
        }
        for (let guard = 0; pending > 0; guard++) {
          expect(guard).toBeLessThan(10_000);
          await settle();
          const next = clock.sleeping[0];
          if (next !== undefined) await clock.advance(next - clock.now());
        }
        const total = bursts.reduce((n, b) => n + b.size, 0);
        expect(statuses).toEqual(Array(total).fill(204));
        for (const [reset, n] of server.sent) expect(n, `window ${reset}`).toBeLessThanOrEqual(limit);
        for (const [reset, n] of server.refused) {
          expect(n, `429s in window ${reset}`).toBeLessThanOrEqual(1);
          // Only a window the client could not know was spent costs a 429.
          expect(foreignSent.has(reset), `429 in window ${reset}`).toBe(true);
        }
      },
    ),
    { numRuns: 150 },
  );
});
