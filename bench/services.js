// `npm run bench:services`: the embedded services alone (`tollgate serve`) against the same service
// behind the gateway, on one SQLite file, in one run. Settings: BENCH_DURATION (s, default 8),
// BENCH_CONNECTIONS (default 50), BENCH_ROUNDS (list runs per side, alternating, default 3; the median
// counts), BENCH_SYNCS (full syncs per side, alternating, default 25; the wp-plugin limit is 60/min).
import { mkdtempSync } from 'node:fs';
import { writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import autocannon from 'autocannon';
import { request } from 'undici';
import { ROOT, freePort, startNode, stopAll, httpRequest } from './lib/processes.js';
import { formatted } from './lib/report.js';

const duration = Number(process.env.BENCH_DURATION ?? 8);
const connections = Number(process.env.BENCH_CONNECTIONS ?? 50);
const syncs = Number(process.env.BENCH_SYNCS ?? 25);
const rounds = Number(process.env.BENCH_ROUNDS ?? 3);
const API_KEY = 'tg_bench_key_0123456789';
const TOKEN = 'bench|bench-secret-0123456789';
const log = (m) => console.log(`[bench:services] ${m}`);

/** Polls until the port answers any HTTP status. */
async function answering(proc, port) {
  for (const deadline = Date.now() + 20_000; Date.now() < deadline;) {
    if (!proc.alive) throw new Error(`${proc.name} exited: ${proc.lines.slice(-10).join('\n')}`);
    try {
      return await httpRequest(port, { path: '/api/v1/openapi.json', timeoutMs: 1000 });
    } catch {
      await new Promise((r) => setTimeout(r, 100));
    }
  }
  throw new Error(`${proc.name} did not answer on ${port}`);
}

async function send(port, method, path, body, headers = {}) {
  const res = await httpRequest(port, {
    method,
    path,
    headers: { 'content-type': 'application/json', ...headers },
    body: body === undefined ? undefined : JSON.stringify(body),
    timeoutMs: 30_000,
  });
  return res;
}

function list(port, seconds = duration) {
  return autocannon({
    url: `http://127.0.0.1:${port}/api/v1/websites?per_page=10&sort=desc`,
    headers: { authorization: `Bearer ${API_KEY}` },
    connections,
    duration: seconds,
  });
}

const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor((xs.length - 1) / 2)];

/**
 * Median latency (ms) of `n` full syncs of 500 products on each side, the two sides taking turns
 * so that both see the same machine (after `warm` unmeasured syncs each).
 */
async function syncLatencies(ports, n, warm = 3) {
  const items = Array.from({ length: 500 }, (_, i) => ({
    id: `p${i}`,
    name: `Product ${i}`,
    url: `https://shop.example/p/${i}`,
    price: i,
  }));
  const times = ports.map(() => []);
  for (let i = 0; i < warm + n; i++) {
    for (const [side, port] of ports.entries()) {
      // Every other sync changes every price, so both the write and the unchanged paths are timed.
      const body = { items: items.map((p) => ({ ...p, price: p.price + (i % 2) })), done: true };
      const started = performance.now();
      // A kept-alive connection on both sides, as the gateway keeps its own to the service.
      const res = await request(`http://127.0.0.1:${port}/v1/wp/products/sync`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', authorization: `Bearer ${TOKEN}` },
        body: JSON.stringify(body),
      });
      const text = await res.body.text();
      if (res.statusCode !== 200) throw new Error(`sync answered ${res.statusCode}: ${text}`);
      if (i >= warm) times[side].push(performance.now() - started);
    }
  }
  return times.map(median);
}

async function main() {
  const dataDir = mkdtempSync(join(tmpdir(), 'tollgate-bench-'));
  const env = {
    DATA_DIR: dataDir,
    BOOTSTRAP_API_KEYS: API_KEY,
    BOOTSTRAP_WORKSPACE_TOKEN: TOKEN,
    LOG_LEVEL: 'warn',
    CONFIG_WATCH: 'false',
  };
  const [websitesPort, bulksyncPort, gatewayPort] = [await freePort(), await freePort(), await freePort()];
  const serve = (name, port) =>
    startNode(name, 'dist/cli.js', {
      args: ['serve', name, '--port', String(port), '--config', 'config/gateway.yaml'],
      env,
    });
  const websites = serve('websites', websitesPort);
  const bulksync = serve('bulksync', bulksyncPort);
  await answering(websites, websitesPort);
  await answering(bulksync, bulksyncPort);
  const gateway = startNode('gateway', 'dist/cli.js', {
    args: ['start', '--config', 'config/gateway.yaml'],
    env: {
      ...env,
      HOST: '127.0.0.1',
      PORT: String(gatewayPort),
      ADMIN_PORT: '0',
      WEBSITES_UPSTREAM: `http://127.0.0.1:${websitesPort}`,
      BULKSYNC_UPSTREAM: `http://127.0.0.1:${bulksyncPort}`,
    },
  });
  await answering(gateway, gatewayPort);
  for (let i = 0; i < 100; i++) {
    const res = await send(
      websitesPort,
      'POST',
      '/api/v1/websites',
      { url: `site-${i}.example` },
      {
        authorization: `Bearer ${API_KEY}`,
      },
    );
    if (res.status !== 201) throw new Error(`seeding answered ${res.status}: ${res.body}`);
  }
  log(`seeded 100 websites; ${connections} connections, ${duration} s per run`);

  // Warm both sides, then alternate: direct, gateway, direct, gateway; each side's median run counts.
  await list(websitesPort, 2);
  await list(gatewayPort, 2);
  const runs = { direct: [], proxied: [] };
  for (let round = 0; round < rounds; round++) {
    runs.direct.push(await list(websitesPort));
    runs.proxied.push(await list(gatewayPort));
  }
  const pick = (rs) => rs.find((r) => r.requests.average === median(rs.map((x) => x.requests.average)));
  const direct = pick(runs.direct);
  const proxied = pick(runs.proxied);
  log(`websites list: direct ${runs.direct.map((r) => Math.round(r.requests.average)).join(', ')} req/s`);
  log(
    `websites list: through the gateway ${runs.proxied.map((r) => Math.round(r.requests.average)).join(', ')} req/s`,
  );
  const [syncDirect, syncProxied] = await syncLatencies([bulksyncPort, gatewayPort], syncs);
  log(
    `full sync of 500 products: median ${syncDirect.toFixed(1)} ms direct, ${syncProxied.toFixed(1)} ms through the gateway`,
  );

  const bad = [direct, proxied].filter((r) => r.non2xx > 0 || r.errors > 0);
  const rows = [
    [
      'websites list (GET, 10 of 100 rows, SQLite)',
      `${Math.round(direct.requests.average)} req/s`,
      `${Math.round(proxied.requests.average)} req/s`,
      (proxied.requests.average / direct.requests.average).toFixed(2) + '×',
    ],
    [
      'full sync, 500 products (POST, one transaction)',
      `${syncDirect.toFixed(1)} ms`,
      `${syncProxied.toFixed(1)} ms`,
      (syncDirect / syncProxied).toFixed(2) + '×',
    ],
  ];
  const md = [
    '# Embedded services: alone and behind the gateway',
    '',
    `Measured by \`npm run bench:services\` on ${new Date().toISOString().slice(0, 10)}, Node ${process.version}. ` +
      '`tollgate serve websites` and `tollgate serve bulksync` run in their own processes on one SQLite file; ' +
      'a gateway (memory store) fronts them. Both sides are warmed, then measured in turns (list: median of ' +
      `${rounds} runs each; sync: median of ${syncs} each). The ratio is the gateway side over the direct side ` +
      '(for latency, direct over gateway): 1.00× means no cost, below 1 is what the hop costs.',
    '',
    '| workload | direct | through the gateway | ratio |',
    '| --- | ---: | ---: | ---: |',
    ...rows.map((r) => `| ${r.join(' | ')} |`),
    '',
    bad.length
      ? `Non-2xx responses or errors occurred: ${JSON.stringify(bad.map((r) => [r.non2xx, r.errors]))}`
      : 'Every response was 2xx.',
    '',
  ].join('\n');
  const file = join(ROOT, 'bench', 'services-results.md');
  await writeFile(file, await formatted(md, file));
  console.log(`\n${md}`);
}

main()
  .catch((err) => {
    console.error(`[bench:services] aborted: ${err.message}`);
    process.exitCode = 1;
  })
  .finally(() => stopAll());
