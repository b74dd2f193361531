// `npm run bench:attack`: how other visitors fare before and during each attack of issues 17 and
// 18, one attack at a time, each on a fresh gateway: the built gateway (dist/cli.js start) runs
// the checkout's config/gateway.yaml plus a TLS listener (HTTP/2 by ALPN), with its embedded
// services, a fresh data folder and a Redis. Per attack: a warm-up, a baseline phase of visitors,
// then the attack and a phase of visitors during it (or after it, for attacks that are over at
// once); at the end of each phase, the gateway's RSS, its data folder on disk and its TCP
// connections to the embedded services. The attackers and visitors run here (and in child
// processes for the rapid reset), all on 127.0.0.1, through X-Forwarded-For (the gateway trusts
// 127.0.0.1): the attacker has a few addresses, every visitor one of its own.
// Settings: ATTACK_RATE (visitor requests per second, default 20), ATTACK_SECONDS (per phase,
// default 10), ATTACK_ONLY (comma-separated attack names, default all: uploads, streams,
// pipelining, csv, slow-readers, rapid-reset, widget-flood), ATTACK_CLIENTS (slow uploads and
// streams, default 150), ATTACK_CSV_PAGES (distinct pages of the exported site, default 20000),
// ATTACK_CSV_DOWNLOADS (default 120), ATTACK_SLOW_CLIENTS and ATTACK_SLOW_STREAMS (HTTP/2
// zero-window readers and streams each, default 2 and 64), ATTACK_RESET_CONNECTIONS (default 32),
// ATTACK_RESET_STREAMS (per connection, default 5000), ATTACK_FLOOD_SESSIONS (default 400),
// ATTACK_COMPARE (another checkout, built, run first with the same attacks: e.g. the commit before
// the fixes) and ATTACK_COMPARE_LABEL (its heading in the results).
import { execFileSync } from 'node:child_process';
import { existsSync, readdirSync, statSync, writeFileSync } from 'node:fs';
import { cpus, loadavg, tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { Agent } from 'undici';
import {
  ATTACKER,
  attackerProbe,
  pipelining,
  rapidReset,
  seedExportSite,
  sessionStreams,
  slowUploads,
  unreadDownloads,
  widgetFlood,
  zeroWindowReaders,
} from './lib/attack-clients.js';
import { certificate, discoverUpstreams, snapshot, startGateway, stopGateway } from './lib/attack-gateway.js';
import { VISITOR_TIMEOUT_MS, visitors } from './lib/attack-visitors.js';
import { ROOT, freePort, startNode, stopAll, waitForRedis } from './lib/processes.js';

const env = (name, fallback) => Number(process.env[name] ?? fallback);
const rate = env('ATTACK_RATE', 20);
const seconds = env('ATTACK_SECONDS', 10);
const clients = env('ATTACK_CLIENTS', 150);
const csvPages = env('ATTACK_CSV_PAGES', 20000);
const csvDownloads = env('ATTACK_CSV_DOWNLOADS', 120);
const slowClients = env('ATTACK_SLOW_CLIENTS', 2);
const slowStreams = env('ATTACK_SLOW_STREAMS', 64);
const resetConnections = env('ATTACK_RESET_CONNECTIONS', 32);
const resetStreams = env('ATTACK_RESET_STREAMS', 5000);
const floodSessions = env('ATTACK_FLOOD_SESSIONS', 400);
const compare = process.env.ATTACK_COMPARE ? resolve(process.env.ATTACK_COMPARE) : undefined;
const log = (m) => console.log(`[bench:attack] ${new Date().toISOString().slice(11, 19)} ${m}`);

/**
 * The attacks, in order. `start` resolves with { stats, stop(), finished?() }; `probe` (optional)
 * runs at the end of both phases; `setup` (optional) before the baseline.
 */
const ATTACKS = [
  {
    name: 'uploads',
    title: `${clients} slow uploads from one address`,
    start: (ctx) => slowUploads(ctx.gw.port, { clients }),
  },
  {
    name: 'streams',
    title: `${clients} event streams of one session`,
    start: (ctx) => sessionStreams(ctx.gw.port, ctx.attackerAgent, { clients }),
  },
  {
    name: 'pipelining',
    title: 'pipelined requests on dropped connections (after)',
    start: (ctx) => pipelining(ctx.gw.port, ctx.attackerAgent),
    probe: (ctx) => attackerProbe(ctx.gw.port),
  },
  {
    name: 'csv',
    title: `${csvDownloads} CSV exports never read, from 2 addresses`,
    setup: (ctx) => seedExportSite(ctx.gw.port, ctx.attackerAgent, { pages: csvPages }),
    start: (ctx) => unreadDownloads(ctx.gw.port, { count: csvDownloads }),
  },
  {
    name: 'slow-readers',
    title: `${slowClients} HTTP/2 clients with a zero window × ${slowStreams} streams of a 51 kB asset`,
    start: (ctx) =>
      zeroWindowReaders(ctx.gw.tlsPort, ctx.tls.pem, { clients: slowClients, streams: slowStreams }),
  },
  {
    name: 'rapid-reset',
    title: `rapid reset: ${resetConnections} HTTP/2 connections × up to ${resetStreams} reset streams`,
    start: (ctx) =>
      rapidReset(ctx.gw.tlsPort, ctx.tls.cert, {
        connections: resetConnections,
        streams: resetStreams,
        seconds: seconds + 2,
      }),
  },
  {
    name: 'widget-flood',
    title: `widget flood: ${floodSessions} sessions of one address posting 4 kB messages`,
    start: (ctx) =>
      widgetFlood(ctx.gw.port, ctx.attackerAgent, { sessions: floodSessions, seconds: seconds + 2 }),
  },
];
const only = process.env.ATTACK_ONLY?.split(',').map((s) => s.trim());
const selected = only ? ATTACKS.filter((a) => only.includes(a.name)) : ATTACKS;

/** Rejects after `ms` (every step of a phase is bounded, whatever the gateway does). */
const within = (promise, ms, what) =>
  Promise.race([
    promise,
    sleep(ms).then(() => {
      throw new Error(`${what} did not finish within ${ms / 1000} s`);
    }),
  ]);

/** The checkout's commit (marked -dirty with uncommitted changes), or its path when it is no git checkout. */
function revision(root) {
  try {
    const args = ['describe', '--always', '--dirty', '--abbrev=7'];
    return execFileSync('git', args, {
      cwd: root,
      encoding: 'utf8',
      stdio: ['ignore', 'pipe', 'ignore'],
    }).trim();
  } catch {
    return root;
  }
}

/** One phase: visitors for `seconds`, then the probe and the snapshot. */
async function phase(ctx, attack, name) {
  const seen = await visitors(ctx.gw.port, ctx.visitorAgent, {
    rate,
    seconds,
    tag: `${attack.name}-${name}`,
  });
  const probe = attack.probe
    ? await within(attack.probe(ctx), 15_000, 'the probe').catch((e) => e.message)
    : undefined;
  return { name, visitors: seen, probe };
}

/** One attack on a fresh gateway: warm-up, baseline, attack. */
async function runAttack(root, commit, attack, { redisPort, tls }) {
  const result = { name: attack.name, title: attack.title, phases: [] };
  const gw = await startGateway(root, `gateway@${commit}`, { redisPort, tls });
  const ctx = {
    gw,
    tls,
    visitorAgent: new Agent({ connections: 512 }),
    attackerAgent: new Agent({ connections: Math.max(clients, floodSessions) + 16 }),
  };
  let running;
  try {
    await visitors(gw.port, ctx.visitorAgent, { rate, seconds: Math.min(seconds, 3), tag: 'warm-up' });
    await discoverUpstreams(gw);
    if (attack.setup) {
      log(`${commit} ${attack.name}: setting up`);
      result.setup = await within(attack.setup(ctx), 180_000, 'the setup');
    }
    log(`${commit} ${attack.name}: baseline`);
    const baseline = await phase(ctx, attack, 'baseline');
    baseline.snapshot = await snapshot(gw);
    result.phases.push(baseline);

    log(`${commit} ${attack.name}: ${attack.title}`);
    running = await within(attack.start(ctx), 120_000, 'the attack');
    await sleep(2000);
    const during = await phase(ctx, attack, 'attack');
    if (running.finished)
      await within(running.finished(), seconds * 1000 + 30_000, 'the attack').catch(() => {});
    during.snapshot = await snapshot(gw);
    result.phases.push(during);
    result.stats = JSON.parse(JSON.stringify(running.stats));
    if (!gw.proc.alive) result.error = 'the gateway exited during the attack';
  } catch (err) {
    result.error = err.message;
  } finally {
    running?.stop();
    await within(
      Promise.all([ctx.visitorAgent.destroy(), ctx.attackerAgent.destroy()]),
      10_000,
      'closing',
    ).catch(() => {});
    result.stopped = await stopGateway(gw);
  }
  return result;
}

/** Source files of the checkout with no built .js, or built before the source changed: dist/ is stale. */
function staleBuild(root) {
  const stale = [];
  const walk = (dir) => {
    for (const entry of readdirSync(join(root, 'src', dir), { withFileTypes: true })) {
      const rel = join(dir, entry.name);
      if (entry.isDirectory()) walk(rel);
      else if (entry.name.endsWith('.ts') && !entry.name.endsWith('.d.ts')) {
        const built = join(root, 'dist', rel.replace(/\.ts$/, '.js'));
        if (!existsSync(built) || statSync(built).mtimeMs < statSync(join(root, 'src', rel)).mtimeMs)
          stale.push(rel);
      }
    }
  };
  walk('.');
  return stale;
}

async function runAgainst(root, redis, redisPort, tls) {
  const commit = revision(root);
  const stale = staleBuild(root);
  if (stale.length > 0) {
    log(
      `WARNING: ${root}/dist is older than its src (${stale.slice(0, 3).join(', ')}…): run npm run build there`,
    );
  }
  const attacks = [];
  for (const attack of selected) {
    await redis.flushall(); // each gateway starts from empty windows
    try {
      attacks.push(await runAttack(root, commit, attack, { redisPort, tls }));
    } catch (err) {
      attacks.push({ name: attack.name, title: attack.title, phases: [], error: err.message });
    }
    log(`${commit} ${attack.name}: done${attacks.at(-1).error ? ` (${attacks.at(-1).error})` : ''}`);
  }
  return { root, commit, attacks, stale: stale.length };
}

const fmt = (n) => (Number.isFinite(n) ? n.toFixed(1) : '–');
const mb = (n) => (Number.isFinite(n) ? (n / 1024 / 1024).toFixed(1) : '–');
const counts = (o) =>
  Object.entries(o ?? {})
    .map(([k, v]) => `${v}× ${k}`)
    .join(', ') || '–';

function markdown(runs) {
  const lines = [
    '# Attack bench: other visitors, memory, disk and upstream connections under attack',
    '',
    '`npm run bench:attack` (bench/attack.js). Each attack runs against a fresh gateway (the',
    "checkout's config/gateway.yaml with its embedded services, a Redis, and one more listener with",
    'TLS and HTTP/2), after a baseline phase of the same length on the same gateway. Visitors send',
    `${rate} requests a second (${seconds} s per phase), alternately \`POST /api/v1/widget/init\` (the`,
    'widget upstream) and `GET /js/script.js` (the websites upstream), each from an address of its',
    `own; latencies in ms over every visitor request (timeouts counted at ${VISITOR_TIMEOUT_MS}). The`,
    `attacker is one address (${ATTACKER}) or a few. RSS is the gateway's VmRSS; the data folder is`,
    'every file of DATA_DIR (the SQLite write-ahead log apart); upstream connections are TCP',
    "connections to the embedded services' loopback ports: open, and closed within the last 60 s",
    '(TIME-WAIT), from `ss`. All at the end of each phase.',
    '',
    `Machine: ${cpus().length} × ${cpus()[0]?.model ?? 'cpu'}, Node ${process.version}, load average at the end ${loadavg()
      .map((l) => l.toFixed(1))
      .join(' / ')} (the machine is shared: figures are indicative).`,
    '',
  ];
  for (const run of runs) {
    const label =
      run.root === ROOT ? `this checkout (${run.commit})` : (process.env.ATTACK_COMPARE_LABEL ?? run.commit);
    lines.push(`## ${label}`, '');
    if (run.stale > 0)
      lines.push(`**Stale build**: ${run.stale} source files are newer than dist/ or not built.`, '');
    lines.push('### Other visitors', '');
    lines.push(
      '| attack | phase | request | sent | 200 | other answers | median | p99 | max |',
      '|---|---|---|---:|---:|---|---:|---:|---:|',
    );
    for (const a of run.attacks) {
      for (const p of a.phases) {
        for (const v of p.visitors) {
          lines.push(
            `| ${a.name} | ${p.name} | ${v.request} | ${v.sent} | ${v.ok} | ${counts(v.others)} | ${fmt(v.median)} | ${fmt(v.p99)} | ${fmt(v.max)} |`,
          );
        }
      }
    }
    lines.push('', '### The gateway', '');
    lines.push(
      "| attack | phase | RSS MB | data folder MB (WAL) | upstream websites: open / closed | upstream widget: open / closed | attacker's address: 16 at once |",
      '|---|---|---:|---:|---:|---:|---|',
    );
    for (const a of run.attacks) {
      for (const p of a.phases) {
        const s = p.snapshot ?? {};
        const up = (name) => {
          const u = s.upstream?.[name];
          return u ? `${u.open} / ${u.timeWait}` : '–';
        };
        const probe = typeof p.probe === 'string' ? p.probe : p.probe ? counts(p.probe) : '–';
        lines.push(
          `| ${a.name} | ${p.name} | ${mb(s.rss)} | ${mb(s.disk?.total)} (${mb(s.disk?.wal)}) | ${up('websites')} | ${up('widget')} | ${probe} |`,
        );
      }
    }
    lines.push('', '### The attacks', '');
    for (const a of run.attacks) {
      const parts = [`**${a.name}**: ${a.title}.`];
      if (a.setup) parts.push(`Set-up: ${JSON.stringify(a.setup)}.`);
      if (a.stats) parts.push(`Attacker: ${JSON.stringify(a.stats)}.`);
      if (a.error) parts.push(`Error: ${a.error}.`);
      if (a.stopped)
        parts.push(`Gateway stopped by ${a.stopped.how} in ${(a.stopped.ms / 1000).toFixed(1)} s.`);
      lines.push(`- ${parts.join(' ')}`);
    }
    lines.push('');
  }
  return lines.join('\n');
}

async function main() {
  const tls = certificate();
  const redisPort = await freePort();
  const redisProc = startNode('redis-server', 'bench/servers/redis.js', { env: { PORT: String(redisPort) } });
  const redis = await waitForRedis(redisProc, redisPort);
  const runs = [];
  for (const root of compare ? [compare, ROOT] : [ROOT])
    runs.push(await runAgainst(root, redis, redisPort, tls));
  redis.disconnect();
  const text = markdown(runs);
  console.log(`\n${text}`);
  writeFileSync(join(ROOT, 'bench', 'attack-results.md'), `${text}\n`);
  writeFileSync(join(tmpdir(), 'tollgate-attack-results.json'), JSON.stringify(runs, null, 2));
  log('wrote bench/attack-results.md');
}

main()
  .catch((err) => {
    console.error(err);
    process.exitCode = 1;
  })
  .finally(() => stopAll());
