// Other visitors of the attack bench: an open loop (a stall shows as latency, not as fewer
// requests) alternating two requests, one per upstream an attack may starve: POST
// /api/v1/widget/init (the widget service) and GET /js/script.js (the websites service). Each
// visitor has an address of its own (198.51.100.0/24, so none nears its own limits) and 8 s
// before it counts as timed out.
import { setTimeout as sleep } from 'node:timers/promises';
import { request } from 'undici';
import { WORKSPACE } from './attack-gateway.js';

export const VISITOR_TIMEOUT_MS = 8000;
export const VISITOR_REQUESTS = ['POST /api/v1/widget/init', 'GET /js/script.js'];

const quantile = (sorted, q) =>
  sorted.length === 0 ? NaN : sorted[Math.min(sorted.length - 1, Math.ceil(q * sorted.length) - 1)];

function summary(outcomes) {
  const sorted = outcomes.map((o) => o.ms).sort((a, b) => a - b);
  const others = {};
  for (const o of outcomes) if (o.status !== 200) others[o.status] = (others[o.status] ?? 0) + 1;
  return {
    sent: outcomes.length,
    ok: outcomes.filter((o) => o.status === 200).length,
    others,
    median: quantile(sorted, 0.5),
    p99: quantile(sorted, 0.99),
    max: sorted.at(-1),
  };
}

function one(port, dispatcher, kind, i, tag) {
  const headers = { 'x-forwarded-for': `198.51.100.${(i % 250) + 1}`, 'user-agent': `visitor-${tag}-${i}` };
  const signal = AbortSignal.timeout(VISITOR_TIMEOUT_MS);
  if (kind === 0) {
    return request(`http://127.0.0.1:${port}/api/v1/widget/init`, {
      method: 'POST',
      dispatcher,
      headers: { ...headers, 'content-type': 'application/json' },
      body: JSON.stringify({ workspace: WORKSPACE }),
      signal,
    });
  }
  return request(`http://127.0.0.1:${port}/js/script.js`, { dispatcher, headers, signal });
}

/** `rate` requests a second for `seconds`; resolves with one summary per visitor request. */
export async function visitors(port, dispatcher, { rate, seconds, tag }) {
  const total = Math.max(2, Math.round(rate * seconds));
  const started = performance.now();
  const outcomes = VISITOR_REQUESTS.map(() => []);
  const pending = [];
  for (let i = 0; i < total; i++) {
    const due = started + (i * 1000) / rate;
    const wait = due - performance.now();
    if (wait > 0) await sleep(wait);
    const sent = performance.now();
    const kind = i % VISITOR_REQUESTS.length;
    pending.push(
      one(port, dispatcher, kind, i, tag)
        .then(async (res) => {
          await res.body.text();
          outcomes[kind].push({ status: res.statusCode, ms: performance.now() - sent });
        })
        .catch(() => outcomes[kind].push({ status: 'timeout', ms: VISITOR_TIMEOUT_MS })),
    );
  }
  await Promise.all(pending);
  return VISITOR_REQUESTS.map((name, kind) => ({ request: name, ...summary(outcomes[kind]) }));
}
