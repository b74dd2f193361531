import type { Redis } from 'ioredis';
import { vi } from 'vitest';
import { JumpingClock } from './clocks.js';

/** A whole second, so the gateway's rounded-up X-RateLimit-Reset lands exactly one period later. */
export const T0 = 1_800_000_000_000;

/**
 * One clock for the client, the in-process gateway and its Redis: the process's Date is faked (and
 * stands still between jumps); a jump moves it on and ages every window in Redis by as much (a key
 * whose time is up is deleted, as its expiry would). The gateway reads Date for X-RateLimit-Reset
 * and Retry-After and Redis's PTTL for the window's end, so both see the jump. Start the gateway
 * after `fakeWorld`, so its clocks are the faked one. Ends with `realWorld`.
 */
export async function fakeWorld(redis: Redis): Promise<JumpingClock> {
  await redis.flushall();
  vi.useFakeTimers({ toFake: ['Date'] });
  vi.setSystemTime(T0);
  return new JumpingClock(
    () => Date.now(),
    async (ms) => {
      for (const key of await redis.keys('tg:*')) {
        const ttl = await redis.pttl(key);
        if (ttl > ms) await redis.pexpire(key, ttl - ms);
        else if (ttl >= 0) await redis.del(key);
      }
      vi.setSystemTime(Date.now() + ms);
    },
  );
}

export function realWorld(): void {
  vi.useRealTimers();
}
