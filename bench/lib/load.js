// The load generators: wrk (a separate process, which pinning places on the shared CPU) or, where
// wrk is missing, autocannon inside the bench process. Both return the same summary:
// { responses, durationSec, rps, p50Ms, p99Ms, maxMs, errors, non2xx, statusCodes? }.
import { spawn } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import autocannon from 'autocannon';
import { clockTicks } from './cpu-time.js';

const WRK_SCRIPT = fileURLToPath(new URL('../wrk/post.lua', import.meta.url));
const SUMMARY_PREFIX = 'WRK_SUMMARY ';
const running = new Set();

/** Stops a wrk still running (the bench was interrupted). */
export function stopLoad() {
  for (const child of running) child.kill('SIGKILL');
}

/**
 * wrk -t1 -c<connections> for whole seconds, POSTing `body` as JSON. The Lua script prints one
 * JSON summary line; everything else wrk prints is kept for error messages.
 */
export function wrkLoad({ port, path, seconds, connections, body, bin = 'wrk' }) {
  const args = [
    '-t1',
    `-c${connections}`,
    `-d${seconds}s`,
    '--timeout',
    '10s',
    '-s',
    WRK_SCRIPT,
    `http://127.0.0.1:${port}${path}`,
  ];
  return runTool(bin, args, seconds, { ...process.env, BENCH_BODY: body }).then(({ code, signal, out }) => {
    const line = out.split('\n').find((l) => l.startsWith(SUMMARY_PREFIX));
    if (code !== 0 || !line)
      throw new Error(`wrk failed (${signal ?? `code ${code}`}): ${out.trim().slice(-500)}`);
    const s = JSON.parse(line.slice(SUMMARY_PREFIX.length));
    const durationSec = s.durationUs / 1e6;
    return {
      responses: s.responses,
      durationSec,
      rps: s.responses / durationSec,
      p50Ms: s.p50Us / 1000,
      p99Ms: s.p99Us / 1000,
      maxMs: s.maxUs / 1000,
      errors: s.connectErrors + s.readErrors + s.writeErrors + s.timeouts,
      non2xx: s.non2xx3xx,
    };
  });
}

/** The fallback: autocannon in this process (it then shares the bench runner's CPU). */
export async function autocannonLoad({ port, path, seconds, connections, body }) {
  const r = await autocannon({
    url: `http://127.0.0.1:${port}${path}`,
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body,
    connections,
    pipelining: 1,
    duration: seconds,
    timeout: 10,
  });
  const statusCodes = Object.fromEntries(Object.entries(r.statusCodeStats).map(([k, v]) => [k, v.count]));
  const responses = Object.values(statusCodes).reduce((n, c) => n + c, 0);
  return {
    responses,
    durationSec: r.duration,
    rps: responses / r.duration,
    p50Ms: r.latency.p50,
    p99Ms: r.latency.p99,
    maxMs: r.latency.max,
    errors: r.errors,
    non2xx: responses - (r['2xx'] ?? 0) - (r['3xx'] ?? 0),
    statusCodes,
  };
}

/**
 * h2load (nghttp2-client) over TLS: HTTP/2, or HTTP/1.1 with `h1` (the same client, so the two
 * protocols are compared with one load generator). -t1, one stream per connection at a time (-m1),
 * so concurrency matches wrk's connections; `streams` > 1 runs that many at once on each connection,
 * as a browser does (then the scenario sets its own, smaller, `connections`). h2load reports no percentiles: p50Ms is its mean and
 * p99Ms its max request time.
 */
export function h2loadLoad({ port, path, seconds, connections, body, h1 = false, streams = 1 }) {
  const bodyFile = join(tmpdir(), `tollgate-bench-body-${process.pid}.json`);
  writeFileSync(bodyFile, body);
  const args = [
    '-t1',
    `-c${connections}`,
    `-m${streams}`,
    `-D${seconds}`,
    '-d',
    bodyFile,
    '-H',
    'content-type: application/json',
    ...(h1 ? ['--h1'] : []),
    `https://127.0.0.1:${port}${path}`,
  ];
  // Through a shell that prints its children's CPU time (/proc/self/stat cutime + cstime) once
  // h2load has exited: the load generator's own cost per request.
  const shell = [
    '-c',
    'h2load "$@"; s=$?; echo "H2LOAD_CPU $(cut -d" " -f16,17 /proc/$$/stat)"; exit $s',
    'sh',
  ];
  return runTool('sh', [...shell, ...args], seconds, process.env).then(({ code, signal, out }) => {
    const finished = /finished in ([\d.]+)s, ([\d.]+) req\/s/.exec(out);
    const requests =
      /requests: \d+ total, \d+ started, (\d+) done, \d+ succeeded, (\d+) failed, (\d+) errored, (\d+) timeout/.exec(
        out,
      );
    const codes = /status codes: (\d+) 2xx, (\d+) 3xx, (\d+) 4xx, (\d+) 5xx/.exec(out);
    const time = /time for request:\s+(\S+)\s+(\S+)\s+(\S+)/.exec(out);
    if (code !== 0 || !finished || !requests || !codes || !time) {
      throw new Error(`h2load failed (${signal ?? `code ${code}`}): ${out.trim().slice(-500)}`);
    }
    const ms = (v) =>
      v.endsWith('us')
        ? Number(v.slice(0, -2)) / 1000
        : v.endsWith('ms')
          ? Number(v.slice(0, -2))
          : Number(v.slice(0, -1)) * 1000;
    const [ok, redirects, client, server] = codes.slice(1).map(Number);
    const responses = ok + redirects + client + server;
    return {
      responses,
      durationSec: Number(finished[1]),
      rps: responses / Number(finished[1]),
      p50Ms: ms(time[3]),
      p99Ms: ms(time[2]),
      maxMs: ms(time[2]),
      errors: Number(requests[2]) + Number(requests[3]) + Number(requests[4]),
      non2xx: responses - ok,
      statusCodes: { 200: ok },
      clientCpuUs: clientCpuUs(out),
    };
  });
}

/** The CPU time the shell of h2loadLoad reports for h2load (in clock ticks), in µs. */
function clientCpuUs(out) {
  const m = /^H2LOAD_CPU (\d+) (\d+)$/m.exec(out);
  return m ? ((Number(m[1]) + Number(m[2])) * 1e6) / clockTicks : undefined;
}

/**
 * Runs a load generator for `seconds` (killed 20 s past them), keeping stdout and stderr together
 * for its parser and for error messages. Resolves with how it exited; rejects when it cannot start.
 */
function runTool(bin, args, seconds, env) {
  return new Promise((resolve, reject) => {
    const child = spawn(bin, args, { env, stdio: 'pipe' });
    running.add(child);
    let out = '';
    child.stdout.setEncoding('utf8').on('data', (c) => (out += c));
    child.stderr.setEncoding('utf8').on('data', (c) => (out += c));
    const timer = setTimeout(() => child.kill('SIGKILL'), (seconds + 20) * 1000);
    child.once('error', (err) => {
      clearTimeout(timer);
      running.delete(child);
      reject(new Error(`cannot run ${bin}: ${err.message}`));
    });
    child.once('exit', (code, signal) => {
      clearTimeout(timer);
      running.delete(child);
      resolve({ code, signal, out });
    });
  });
}
