// `npm run bench:attack`: how other visitors' POST /api/v1/widget/init fares before and during two
// attacks from one address: 150 slow uploads (each sending a byte every 2 s) and 150 event streams of
// one visitor session. The built gateway (dist/cli.js start) runs the shipped config with its
// embedded services and a Redis; the attacker and the visitors run here. Each comes through
// X-Forwarded-For (the gateway trusts 127.0.0.1), so the attacker has one address and the visitors
// many. Visitors arrive at a fixed rate whatever the answers (open loop: a stall shows as latency,
// not as fewer requests), each given 8 s before it counts as timed out.
// Settings: ATTACK_RATE (visitor inits per second, default 20), ATTACK_SECONDS (per phase, default
// 10), ATTACK_CLIENTS (uploads and streams per attack, default 150), ATTACK_COMPARE (another
// checkout, built, run first with the same phases: e.g. the commit before the fix) and
// ATTACK_COMPARE_LABEL (its heading in the results).
import { execFileSync } from 'node:child_process';
import { mkdtempSync } from 'node:fs';
import { writeFile } from 'node:fs/promises';
import { connect } from 'node:net';
import { cpus, loadavg, tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { Agent, request } from 'undici';
import {
  ROOT,
  describeExit,
  freePort,
  startNode,
  stop,
  stopAll,
  waitForHttp,
  waitForRedis,
} from './lib/processes.js';

const rate = Number(process.env.ATTACK_RATE ?? 20);
const seconds = Number(process.env.ATTACK_SECONDS ?? 10);
const attackers = Number(process.env.ATTACK_CLIENTS ?? 150);
const compare = process.env.ATTACK_COMPARE ? resolve(process.env.ATTACK_COMPARE) : undefined;
const VISITOR_TIMEOUT_MS = 8000;
const ATTACKER = '203.0.113.66';
const WORKSPACE = 'acme';
const log = (m) => console.log(`[bench:attack] ${m}`);

const quantile = (sorted, q) =>
  sorted.length === 0 ? NaN : sorted[Math.min(sorted.length - 1, Math.ceil(q * sorted.length) - 1)];

/**
 * Visitors: `rate` inits a second for `seconds`, each from an address and user agent of its own
 * (198.51.100.0/24, so no visitor nears its own limits). Resolves with what they saw.
 */
async function visitors(port, dispatcher, phase) {
  const total = Math.round(rate * seconds);
  const started = performance.now();
  const outcomes = [];
  const pending = [];
  for (let i = 0; i < total; i++) {
    const due = started + (i * 1000) / rate;
    const wait = due - performance.now();
    if (wait > 0) await sleep(wait);
    const sent = performance.now();
    pending.push(
      request(`http://127.0.0.1:${port}/api/v1/widget/init`, {
        method: 'POST',
        dispatcher,
        headers: {
          'content-type': 'application/json',
          'x-forwarded-for': `198.51.100.${(i % 250) + 1}`,
          'user-agent': `visitor-${phase}-${i}`,
        },
        body: JSON.stringify({ workspace: WORKSPACE }),
        signal: AbortSignal.timeout(VISITOR_TIMEOUT_MS),
      })
        .then(async (res) => {
          await res.body.text();
          outcomes.push({ status: res.statusCode, ms: performance.now() - sent });
        })
        .catch(() => outcomes.push({ status: 'timeout', ms: VISITOR_TIMEOUT_MS })),
    );
  }
  await Promise.all(pending);
  const ok = outcomes.filter((o) => o.status === 200).map((o) => o.ms);
  const sorted = outcomes.map((o) => o.ms).sort((a, b) => a - b);
  const others = {};
  for (const o of outcomes) if (o.status !== 200) others[o.status] = (others[o.status] ?? 0) + 1;
  return {
    phase,
    sent: total,
    ok: ok.length,
    others,
    median: quantile(sorted, 0.5),
    p99: quantile(sorted, 0.99),
    max: sorted.at(-1),
  };
}

/**
 * 150 uploads from one address, each declaring 10 kB and sending a byte every 2 s. One that is
 * answered (refused, or timed out by the gateway) comes back 2 s later, as a patient attacker does:
 * at most `attackers` attempts per 2 s, within the widget-init limit of 1000 a minute.
 */
function slowUploads(port) {
  const stats = { attempts: 0, answered: {}, open: 0 };
  const sockets = new Set();
  let stopped = false;
  const one = () => {
    if (stopped) return;
    stats.attempts++;
    const socket = connect(port, '127.0.0.1');
    sockets.add(socket);
    let text = '';
    let timer;
    socket.on('connect', () => {
      stats.open++;
      socket.write(
        'POST /api/v1/widget/init HTTP/1.1\r\nHost: bench\r\nContent-Type: application/json\r\n' +
          `Content-Length: 10000\r\nX-Forwarded-For: ${ATTACKER}\r\nUser-Agent: slowloris\r\n\r\n{`,
      );
      timer = setInterval(() => socket.write(' '), 2000);
    });
    socket.on('data', (d) => (text += d));
    socket.on('error', () => {});
    socket.on('close', () => {
      clearInterval(timer);
      sockets.delete(socket);
      stats.open--;
      const code = /"code":"([a-z_]+)"/.exec(text)?.[1] ?? (text.split(' ')[1] || 'closed');
      stats.answered[code] = (stats.answered[code] ?? 0) + 1;
      setTimeout(one, 2000);
    });
  };
  for (let i = 0; i < attackers; i++) one();
  return {
    stats,
    stop() {
      stopped = true;
      for (const s of sockets) s.destroy();
    },
  };
}

/** 150 event streams of one visitor session; a refused or ended one is retried 5 s later (its Retry-After). */
async function streams(port, dispatcher) {
  const init = await request(`http://127.0.0.1:${port}/api/v1/widget/init`, {
    method: 'POST',
    dispatcher,
    headers: { 'content-type': 'application/json', 'x-forwarded-for': ATTACKER, 'user-agent': 'streamer' },
    body: JSON.stringify({ workspace: WORKSPACE }),
  });
  const { token } = await init.body.json();
  const stats = { attempts: 0, answered: {}, open: 0 };
  const bodies = new Set();
  let stopped = false;
  const one = async () => {
    while (!stopped) {
      stats.attempts++;
      try {
        const res = await request(`http://127.0.0.1:${port}/api/v1/widget/messages/stream`, {
          method: 'POST',
          dispatcher,
          headers: { authorization: `Bearer ${token}`, 'x-forwarded-for': ATTACKER },
          signal: AbortSignal.timeout(60_000),
        });
        if (res.statusCode === 200) {
          stats.answered['200'] = (stats.answered['200'] ?? 0) + 1;
          stats.open++;
          bodies.add(res.body);
          await res.body.dump({ limit: Infinity }).catch(() => {});
          bodies.delete(res.body);
          stats.open--;
        } else {
          const code = /"code":"([a-z_]+)"/.exec(await res.body.text())?.[1] ?? res.statusCode;
          stats.answered[code] = (stats.answered[code] ?? 0) + 1;
        }
      } catch {
        stats.answered.error = (stats.answered.error ?? 0) + 1;
      }
      if (!stopped) await sleep(5000);
    }
  };
  for (let i = 0; i < attackers; i++) void one();
  return {
    stats,
    stop() {
      stopped = true;
      for (const b of bodies) b.destroy();
    },
  };
}

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

/** Runs every phase against the checkout at `root` (its dist/cli.js and config/gateway.yaml). */
async function runAgainst(root, redisPort) {
  const port = await freePort();
  const commit = revision(root);
  const gateway = startNode(`gateway@${commit}`, join(root, 'dist', 'cli.js'), {
    args: ['start', '--config', join(root, 'config', 'gateway.yaml')],
    env: {
      HOST: '127.0.0.1',
      PORT: String(port),
      ADMIN_PORT: '0',
      DATA_DIR: mkdtempSync(join(tmpdir(), 'tollgate-attack-')),
      REDIS_URL: `redis://127.0.0.1:${redisPort}`,
      TRUSTED_PROXIES: '127.0.0.1',
      BOOTSTRAP_WORKSPACE_TOKEN: 'bench|bench-secret-0123456789',
      BOOTSTRAP_WORKSPACE: WORKSPACE,
      LOG_LEVEL: 'error',
      CONFIG_WATCH: 'false',
    },
  });
  await waitForHttp(gateway, port);
  // Visitors and stream attacker each on connections of their own (as separate browsers would be).
  const visitorAgent = new Agent({ connections: 512 });
  const attackerAgent = new Agent({ connections: attackers + 10 });
  const phases = [];
  const attacks = {};
  try {
    log(`${commit}: visitors alone`);
    await visitors(port, visitorAgent, 'warm-up');
    phases.push(await visitors(port, visitorAgent, 'before the uploads'));

    log(`${commit}: ${attackers} slow uploads from ${ATTACKER}`);
    const uploads = slowUploads(port);
    await sleep(2000);
    phases.push(await visitors(port, visitorAgent, `during ${attackers} slow uploads`));
    attacks.uploads = { ...uploads.stats, answered: { ...uploads.stats.answered } };
    uploads.stop();
    await sleep(2000);

    phases.push(await visitors(port, visitorAgent, 'before the streams'));
    log(`${commit}: ${attackers} streams of one session from ${ATTACKER}`);
    const held = await streams(port, attackerAgent);
    await sleep(2000);
    phases.push(await visitors(port, visitorAgent, `during ${attackers} streams of one session`));
    attacks.streams = { ...held.stats, answered: { ...held.stats.answered } };
    held.stop();
    if (!gateway.alive) throw new Error(describeExit(gateway));
  } finally {
    await Promise.all([visitorAgent.destroy(), attackerAgent.destroy()]);
    await stop(gateway);
  }
  return { root, commit, phases, attacks };
}

const fmt = (n) => (Number.isFinite(n) ? n.toFixed(1) : '–');

function markdown(runs) {
  const lines = [
    '# Attack bench: other visitors under slow uploads and many streams',
    '',
    '`npm run bench:attack` (bench/attack.js). The built gateway runs the shipped config/gateway.yaml',
    'with its embedded services and a Redis. Visitors send `POST /api/v1/widget/init` at a fixed',
    `rate (${rate}/s, ${seconds} s per phase, 8 s timeout), each from an address of its own; the attacker`,
    `is one address (${ATTACKER}). Slow uploads: ${attackers} connections each declaring a 10 kB body`,
    `and sending a byte every 2 s, reconnecting 2 s after an answer. Streams: ${attackers} streams of one`,
    'visitor session, each retried 5 s after a refusal. Latencies in ms, over every visitor request',
    '(timeouts counted at 8000).',
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
    lines.push(
      '| phase | sent | 200 | other answers | median | p99 | max |',
      '|---|---:|---:|---|---:|---:|---:|',
    );
    for (const p of run.phases) {
      const others = Object.entries(p.others)
        .map(([k, v]) => `${v}× ${k}`)
        .join(', ');
      lines.push(
        `| ${p.phase} | ${p.sent} | ${p.ok} | ${others || '–'} | ${fmt(p.median)} | ${fmt(p.p99)} | ${fmt(p.max)} |`,
      );
    }
    lines.push('');
    for (const [name, s] of Object.entries(run.attacks)) {
      const answered = Object.entries(s.answered)
        .map(([k, v]) => `${v}× ${k}`)
        .join(', ');
      lines.push(
        `- ${name}: ${s.attempts} attempts; open when the phase ended: ${s.open}; answered: ${answered || 'none'}.`,
      );
    }
    lines.push('');
  }
  return lines.join('\n');
}

async function main() {
  const redisPort = await freePort();
  const redisProc = startNode('redis-server', 'bench/servers/redis.js', { env: { PORT: String(redisPort) } });
  const redis = await waitForRedis(redisProc, redisPort);
  const runs = [];
  for (const root of compare ? [compare, ROOT] : [ROOT]) {
    await redis.flushall(); // each gateway starts from empty windows
    runs.push(await runAgainst(root, redisPort));
  }
  redis.disconnect();
  const text = markdown(runs);
  console.log(`\n${text}`);
  await writeFile(join(ROOT, 'bench', 'attack-results.md'), `${text}\n`);
  log('wrote bench/attack-results.md');
}

main()
  .catch((err) => {
    console.error(err);
    process.exitCode = 1;
  })
  .finally(() => stopAll());
