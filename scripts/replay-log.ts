/**
 * Writes a made-up access log of a realistic shape, for `tollgate replay`'s worked example
 * (docs/limiting.md) and its bench (bench/replay.js): a day-and-night curve of many cold
 * clients (a few return often, most seldom) and five hot ones, each flooding for half an hour a
 * day at its own rate. The same seed writes the same log.
 * Usage: npx tsx scripts/replay-log.ts [--lines N] [--days N] [--start ISO] [--seed N]
 *        [--format tollgate|combined|caddy] > access.log
 * tollgate lines carry what log.keyParts adds (host, hashed ip and user_agent).
 */
import { parseArgs } from 'node:util';
import { hashPart } from '../src/identity/hash.js';

const { values } = parseArgs({
  options: {
    lines: { type: 'string', default: '100000' },
    days: { type: 'string', default: '1' },
    start: { type: 'string', default: '2026-11-16T00:00:00Z' },
    seed: { type: 'string', default: '1' },
    format: { type: 'string', default: 'tollgate' },
  },
});
const LINES = Number(values.lines);
const DAYS = Number(values.days);
const START = Date.parse(values.start);
const FORMAT = values.format;
if (
  !(LINES > 0) ||
  !(DAYS > 0) ||
  Number.isNaN(START) ||
  !['tollgate', 'combined', 'caddy'].includes(FORMAT)
) {
  console.error(
    'usage: replay-log.ts [--lines N] [--days N] [--start ISO] [--seed N] [--format tollgate|combined|caddy]',
  );
  process.exit(2);
}

/** mulberry32: a small seeded generator, so a log can be written again byte for byte. */
let seed = Number(values.seed) >>> 0;
function random(): number {
  seed = (seed + 0x6d2b79f5) >>> 0;
  let t = seed;
  t = Math.imul(t ^ (t >>> 15), t | 1);
  t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
  return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
}

const AGENTS = [
  'Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0 Safari/537.36',
  'Mozilla/5.0 (Macintosh; Intel Mac OS X 14_6) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/18.1 Safari/605.1.15',
  'Mozilla/5.0 (iPhone; CPU iPhone OS 18_1 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Mobile/15E148',
  'Mozilla/5.0 (X11; Linux x86_64; rv:133.0) Gecko/20100101 Firefox/133.0',
];

interface Client {
  readonly ip: string;
  readonly agent: string;
}

/** Cold clients: 20,000 addresses; client i's share falls off with i (a few regulars, a long tail). */
const COLD = 20_000;
const cold = (i: number): Client => ({
  ip: `10.${(i >> 16) & 255}.${(i >> 8) & 255}.${i & 255}`,
  agent: AGENTS[i % AGENTS.length]!,
});
/** Hot clients: requests a minute while flooding, the UTC hour their half hour starts, what they ask for. */
const HOT = [
  { perMinute: 420, hour: 3, path: 'search', agent: 'python-requests/2.32.3' },
  { perMinute: 330, hour: 9, path: 'search', agent: 'Go-http-client/1.1' },
  { perMinute: 210, hour: 14, path: 'items', agent: 'curl/8.5.0' },
  { perMinute: 95, hour: 17, path: 'orders', agent: AGENTS[0]! },
  { perMinute: 40, hour: 20, path: 'orders', agent: AGENTS[1]! },
].map((h, k) => ({ ...h, client: { ip: `203.0.113.${10 + k}`, agent: h.agent } }));

const minutes = DAYS * 1440;
const hotLines = HOT.reduce((n, h) => n + h.perMinute * 30, 0) * DAYS;
const coldLines = Math.max(0, LINES - hotLines);
/** The day-and-night curve: the busiest at 15:00 UTC, a fifth of that at 03:00. */
const weight = (minute: number) => 0.6 + 0.4 * Math.sin((2 * Math.PI * ((minute % 1440) / 60 - 9)) / 24);
let weights = 0;
for (let m = 0; m < minutes; m++) weights += weight(m);

function target(kind: string): { method: string; path: string } {
  if (kind === 'search') return { method: 'GET', path: `/api/search?q=${Math.floor(random() * 5000)}` };
  if (kind === 'items') return { method: 'GET', path: `/api/items/${Math.floor(random() * 100000)}` };
  return { method: 'POST', path: '/api/orders' };
}

const hashes = new Map<string, { ip: string; ua: string }>();
function line(t: number, c: Client, req: { method: string; path: string }): string {
  const status = 200;
  if (FORMAT === 'tollgate') {
    let h = hashes.get(c.ip + c.agent);
    if (!h) hashes.set(c.ip + c.agent, (h = { ip: hashPart(`ip=${c.ip}`), ua: hashPart(`ua=${c.agent}`) }));
    return JSON.stringify({
      level: 30,
      time: new Date(t).toISOString(),
      service: 'tollgate',
      reqId: `r${t.toString(36)}${Math.floor(random() * 1e6).toString(36)}`,
      method: req.method,
      path: req.path,
      client: c.ip,
      status,
      route: 'api',
      limit: 'allowed',
      ms: 2.5,
      host: 'api.example.com',
      keys: { ip: h.ip, user_agent: h.ua },
    });
  }
  if (FORMAT === 'caddy') {
    return JSON.stringify({
      level: 'info',
      ts: t / 1000,
      logger: 'http.log.access',
      msg: 'handled request',
      request: {
        remote_ip: c.ip,
        client_ip: c.ip,
        proto: 'HTTP/1.1',
        method: req.method,
        host: 'api.example.com',
        uri: req.path,
        headers: { 'User-Agent': [c.agent] },
      },
      status,
      size: 120,
    });
  }
  return `${c.ip} - - [${clfDate(t)}] "${req.method} ${req.path} HTTP/1.1" ${status} 120 "-" "${c.agent}"`;
}

const MONTHS = ['Jan', 'Feb', 'Mar', 'Apr', 'May', 'Jun', 'Jul', 'Aug', 'Sep', 'Oct', 'Nov', 'Dec'];
const two = (n: number) => String(n).padStart(2, '0');
function clfDate(t: number): string {
  const d = new Date(t);
  return (
    `${two(d.getUTCDate())}/${MONTHS[d.getUTCMonth()]}/${d.getUTCFullYear()}:` +
    `${two(d.getUTCHours())}:${two(d.getUTCMinutes())}:${two(d.getUTCSeconds())} +0000`
  );
}

let out: string[] = [];
let carry = 0;
async function flush(): Promise<void> {
  if (!process.stdout.write(`${out.join('\n')}\n`)) await new Promise((r) => process.stdout.once('drain', r));
  out = [];
}

for (let m = 0; m < minutes; m++) {
  const minuteStart = START + m * 60_000;
  const events: { t: number; c: Client; kind: string }[] = [];
  carry += (coldLines * weight(m)) / weights;
  // The last minute takes what rounding left: exactly --lines lines (when the hot ones fit).
  const n = m === minutes - 1 ? Math.round(carry) : Math.floor(carry);
  carry -= n;
  for (let i = 0; i < n; i++) {
    const r = random();
    const kind = r < 0.6 ? 'search' : r < 0.92 ? 'items' : 'orders';
    events.push({
      t: minuteStart + Math.floor(random() * 60_000),
      c: cold(Math.floor(COLD * random() ** 3)),
      kind,
    });
  }
  const hour = Math.floor((m % 1440) / 60);
  for (const h of HOT) {
    if (hour !== h.hour || m % 60 >= 30) continue;
    for (let i = 0; i < h.perMinute; i++)
      events.push({ t: minuteStart + Math.floor(random() * 60_000), c: h.client, kind: h.path });
  }
  events.sort((a, b) => a.t - b.t);
  for (const e of events) out.push(line(e.t, e.c, target(e.kind)));
  if (out.length >= 10_000) await flush();
}
if (out.length) await flush();
