// A Redis that stops answering (SIGSTOP) must hold no request longer than the command timeout,
// however many arrive together: ioredis queues auto-pipelined commands behind the pipeline in
// flight and starts their timers only when they are written, which used to double the wait.
import { expect } from 'vitest';
import { burst } from '../helpers/burst.js';
import { gatewayTest } from '../helpers/fixtures.js';
import { gatewayYaml, send } from '../helpers/gateway.js';
import { sleep, timed } from '../helpers/wait.js';

const TIMEOUT_MS = 500;

const test = gatewayTest({
  config: gatewayYaml(`
store:
  redis: { url: '\${REDIS_URL}', commandTimeout: ${TIMEOUT_MS}ms, connectTimeout: 1s }
upstreams:
  app: { url: '\${UPSTREAM_URL}' }
limiters:
  per-ip: { onStoreError: open, windows: [{ limit: 1000, period: 1m, key: [ip] }] }
  closed: { onStoreError: closed, windows: [{ limit: 1000, period: 1m, key: [ip] }] }
routes:
  - { name: open, paths: ['/open/*'], upstream: app, limiters: [per-ip] }
  - { name: closed, paths: ['/closed/*'], upstream: app, limiters: [closed] }
`),
});

test('20 concurrent clients against a stopped Redis: each answered within the command timeout', async ({
  gateway,
  redis,
}) => {
  // Warm: the script is loaded and the connection is ready before Redis stops.
  expect((await send(`${gateway.url()}/open/warm`)).headers['x-ratelimit-remaining']).toBe('999');
  const frozen = redis.freeze();
  try {
    for (const route of ['open', 'closed']) {
      // Three waves, each arriving while the previous one's commands are still unanswered.
      const waves = await burst(3, async (wave) => {
        await sleep(wave * (TIMEOUT_MS / 3)); // staggered arrivals, by design
        return burst(20, (i) => timed(() => send(`${gateway.url()}/${route}/w${wave}-${i}`)), 20);
      });
      const replies = waves.flat();
      for (const { value } of replies) expect(value.status).toBe(route === 'open' ? 200 : 503);
      const slowest = Math.max(...replies.map((r) => r.ms));
      // "closed" answers 503 straight after the store gives up: the timeout plus a few ms (slack
      // for a loaded CI machine). "open" forwards after that, so it may take a little longer, but
      // never the doubled wait (twice the timeout) this guards against.
      expect(slowest).toBeLessThan(route === 'closed' ? TIMEOUT_MS + 150 : 1.8 * TIMEOUT_MS);
    }
  } finally {
    frozen.thaw();
  }
});
