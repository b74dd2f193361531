/**
 * Draws docs/images/algorithms.svg from a real run of the memory store (the same sums as the Redis
 * script) on a replayed clock: what each algorithm lets through when one client floods at 20
 * requests a second, limit 10 per 10 s (token bucket: burst 10). Plain SVG text, no dependency.
 * Also prints (to stderr) what each lets through of 20 requests sent at once 1 ms before a window
 * boundary of the clock and 20 more at it (the fixed window having started on the boundary before).
 * Usage: npx tsx scripts/algorithms-chart.ts > docs/images/algorithms.svg
 */
import { MemoryStore } from '../src/store/memory-store.js';
import type { WindowRequest } from '../src/store/window-store.js';

const LIMIT = 10;
const PERIOD = 10_000;
const START = 1_800_000_007_000; // 7 s into a 10 s window of the clock: the fixed window starts here
const END = START + 40_000;
const EVERY = 50; // 20 requests a second

const base = { key: 'k', limit: LIMIT, periodMs: PERIOD, enforce: true, cacheWhenSpent: false };
const ALGORITHMS: { name: string; colour: string; request: WindowRequest }[] = [
  { name: 'fixed', colour: '#d62728', request: base },
  { name: 'sliding', colour: '#1f77b4', request: { ...base, algorithm: 'sliding' } },
  { name: 'token-bucket', colour: '#2ca02c', request: { ...base, algorithm: 'token-bucket', rate: LIMIT } },
];

/** The admitted requests' times (ms from START), and the most admitted in any 10 s span. */
async function run(request: WindowRequest): Promise<{ admitted: number[]; worstSpan: number }> {
  let now = START;
  const store = new MemoryStore({ maxKeys: 10, sweepIntervalMs: 60_000, now: () => now });
  const admitted: number[] = [];
  for (; now < END; now += EVERY) {
    const [result] = await store.hit([request]);
    if (result!.allowed) admitted.push(now - START);
  }
  await store.close();
  let worstSpan = 0;
  for (let i = 0, j = 0; i < admitted.length; i++) {
    while (admitted[i]! - admitted[j]! >= PERIOD) j++;
    worstSpan = Math.max(worstSpan, i - j + 1);
  }
  return { admitted, worstSpan };
}

const W = 720;
const H = 360;
const M = { left: 50, right: 170, top: 30, bottom: 40 };
const x = (ms: number) => M.left + (ms / (END - START)) * (W - M.left - M.right);
const MAX_Y = 60;
const y = (n: number) => H - M.bottom - (n / MAX_Y) * (H - M.top - M.bottom);

/** 20 at once 1 ms before a boundary, 20 at it; the key's first hit 10 s before (a fixed window's start). */
async function boundary(request: WindowRequest): Promise<[number, number]> {
  const edge = 1_800_000_010_000;
  let now = edge - PERIOD;
  const store = new MemoryStore({ maxKeys: 10, sweepIntervalMs: 60_000, now: () => now });
  await store.hit([request]);
  const passed: [number, number] = [0, 0];
  for (const [i, at] of [edge - 1, edge].entries()) {
    now = at;
    for (let n = 0; n < 20; n++) if ((await store.hit([request]))[0]!.allowed) passed[i]!++;
  }
  await store.close();
  return passed;
}
for (const a of ALGORITHMS) {
  const [before, after] = await boundary(a.request);
  process.stderr.write(`| ${a.name} | ${before} | ${after} | ${before + after} |\n`);
}

const runs = await Promise.all(ALGORITHMS.map(async (a) => ({ ...a, ...(await run(a.request)) })));
const out: string[] = [
  `<svg xmlns="http://www.w3.org/2000/svg" width="${W}" height="${H}" font-family="sans-serif" font-size="12">`,
  `<rect width="${W}" height="${H}" fill="#fff"/>`,
  `<text x="${M.left}" y="18" font-weight="bold">Admitted requests (cumulative) under a flood of 20/s; limit 10 per 10 s</text>`,
];
for (let s = 0; s <= 40; s += 10) {
  out.push(`<line x1="${x(s * 1000)}" x2="${x(s * 1000)}" y1="${y(0)}" y2="${y(MAX_Y)}" stroke="#ddd"/>`);
  out.push(`<text x="${x(s * 1000)}" y="${H - M.bottom + 16}" text-anchor="middle">${s} s</text>`);
}
for (let n = 0; n <= MAX_Y; n += 10) {
  out.push(`<line x1="${M.left}" x2="${W - M.right}" y1="${y(n)}" y2="${y(n)}" stroke="#eee"/>`);
  out.push(`<text x="${M.left - 6}" y="${y(n) + 4}" text-anchor="end">${n}</text>`);
}
// The clock's 10 s boundaries (sliding windows): 3 s after the flood starts, then every 10 s.
for (let b = 3000; b < END - START; b += PERIOD)
  out.push(
    `<line x1="${x(b)}" x2="${x(b)}" y1="${y(0)}" y2="${y(MAX_Y)}" stroke="#1f77b4" stroke-dasharray="3 3" opacity="0.5"/>`,
  );
runs.forEach((r, i) => {
  let path = `M${x(0)},${y(0)}`;
  r.admitted.forEach((t, n) => (path += ` L${x(t)},${y(n)} L${x(t)},${y(n + 1)}`));
  path += ` L${x(END - START)},${y(r.admitted.length)}`;
  out.push(`<path d="${path}" fill="none" stroke="${r.colour}" stroke-width="2"/>`);
  const ly = M.top + 20 + i * 40;
  out.push(
    `<line x1="${W - M.right + 12}" x2="${W - M.right + 32}" y1="${ly}" y2="${ly}" stroke="${r.colour}" stroke-width="2"/>`,
  );
  out.push(`<text x="${W - M.right + 38}" y="${ly + 4}">${r.name}: ${r.admitted.length}</text>`);
  out.push(`<text x="${W - M.right + 38}" y="${ly + 18}" fill="#555">most in 10 s: ${r.worstSpan}</text>`);
});
out.push(
  `<text x="${W - M.right + 12}" y="${M.top + 150}" fill="#1f77b4">dashed: the clock's 10 s</text>`,
  `<text x="${W - M.right + 12}" y="${M.top + 164}" fill="#1f77b4">boundaries (sliding)</text>`,
);
out.push('</svg>', '');
process.stdout.write(out.join('\n'));
