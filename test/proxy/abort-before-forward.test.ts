// A client that leaves while the limiter waits on the store is never forwarded.
import { request } from 'undici';
import { expect } from 'vitest';
import { gatewayTest } from '../helpers/fixtures.js';
import { gatewayYaml, REDIS_STORE, send } from '../helpers/gateway.js';
import { capturingLogger } from '../helpers/log-capture.js';
import { sampleValue } from '../helpers/prometheus.js';
import { timed, waitFor } from '../helpers/wait.js';

const log = capturingLogger();
const test = gatewayTest({
  config: gatewayYaml(`
shutdown: { drainTimeout: 1s }
${REDIS_STORE}
upstreams: { app: { url: "\${UPSTREAM_URL}" } }
limiters:
  l: { windows: [{ limit: 10, period: 1m, key: [ip] }] }
routes: [{ name: r, paths: ["/*"], upstream: app, limiters: [l] }]
`),
  options: { logger: log.logger },
});

/** Counted once the store has answered; the handler then decides, with no await, whether to forward. */
const COUNTED = 'tollgate_requests_total{limiter="l",decision="allowed"}';

test('the request is dropped, and shutdown does not wait for it', async ({ gateway, redis, upstream }) => {
  const frozen = redis.freeze();
  try {
    const aborted = request(`${gateway.url()}/slow?ms=100`, { signal: AbortSignal.timeout(100) });
    await expect(aborted).rejects.toThrow();
    // The gateway has seen the client go (its access line is written when the response closes)...
    await waitFor(
      () => log.lines.filter((l) => l['path'] === '/slow' && l['aborted'] === true),
      (lines) => lines.length === 1,
      { what: 'the access line of the aborted request' },
    );
  } finally {
    frozen.thaw(); // ...and only then does the store answer
  }
  await waitFor(
    async () => sampleValue(await gateway.metrics.registry.metrics(), COUNTED),
    (n) => n === 1,
    { what: 'the store to answer for the aborted request' },
  );
  // A later request is forwarded; the aborted one, which would have gone first, never was.
  const marker = await send(`${gateway.url()}/marker`);
  expect(marker.status).toBe(200);
  expect(upstream.seen.map((s) => s.url)).toEqual(['/marker']);
  const { ms } = await timed(() => gateway.close());
  expect(ms).toBeLessThan(1500); // within the drain timeout, not the upstream's headers timeout
});
