import { requestsInFlight } from './prometheus.js';
import type { TestUpstream } from './upstream.js';
import { waitFor } from './wait.js';

/** Waits until the gateway holds no in-flight slot and the upstream no open request. */
export async function allReleased(
  adminUrl: string,
  upstream: TestUpstream,
  timeoutMs?: number,
): Promise<void> {
  await waitFor(
    () => requestsInFlight(adminUrl),
    (n) => n === 0,
    { timeoutMs, what: 'every slot back' },
  );
  await waitFor(
    () => upstream.openRequests,
    (n) => n === 0,
    { timeoutMs, what: 'no request open upstream' },
  );
}
