// Child processes of the bench: spawning, readiness, probing, stopping, and their output.
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { existsSync } from 'node:fs';
import { request } from 'node:http';
import { createServer } from 'node:net';
import { delimiter, join } from 'node:path';
import { URL, fileURLToPath } from 'node:url';
import { setTimeout as sleep } from 'node:timers/promises';
import { Redis } from 'ioredis';

export const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const LIFELINE = fileURLToPath(new URL('../servers/lifeline.js', import.meta.url));
const KEEP_LINES = 200;

const running = new Set();

/** A TCP port on 127.0.0.1 that was free a moment ago. */
/** redis-server's arguments for a bench server: no persistence, loopback only, warnings only. */
export const redisServerArgs = (port) => [
  ...['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no'],
  ...['--protected-mode', 'no', '--loglevel', 'warning'],
];

export function freePort() {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.unref();
    server.on('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address();
      server.close(() => resolve(port));
    });
  });
}

/** Whether a command is on the PATH. */
export function onPath(command) {
  return (process.env.PATH ?? '').split(delimiter).some((d) => d && existsSync(join(d, command)));
}

/**
 * Starts `node [nodeArgs] script [args]` from the repository root, with the lifeline preloaded so
 * the child stops when the bench does. With `cpu`, it starts under `taskset -c <cpu>` (taskset
 * execs node, so the pid is node's, and every thread and child it makes inherits the CPU). Keeps
 * the last lines of its output; JSON lines (pino) are also handed to `onJson`. `wrapper` runs
 * node under another command (valgrind), which must keep node's pid.
 */
export function startNode(
  name,
  script,
  { args = [], nodeArgs = [], env = {}, onJson, cpu, wrapper = [] } = {},
) {
  const nodeCommand = [...wrapper, process.execPath, '--import', LIFELINE, ...nodeArgs, script, ...args];
  const [command, ...commandArgs] =
    cpu === undefined ? nodeCommand : ['taskset', '-c', String(cpu), ...nodeCommand];
  const child = spawn(command, commandArgs, {
    cwd: ROOT,
    env: { ...process.env, ...env },
    stdio: ['ignore', 'pipe', 'pipe', 'ipc'],
  });
  const proc = {
    name,
    child,
    lines: [],
    exited: once(child, 'exit').then(([code, signal]) => ({ code, signal })),
    get alive() {
      return child.exitCode === null && child.signalCode === null;
    },
  };
  const keep = (stream) => {
    let rest = '';
    stream.setEncoding('utf8');
    stream.on('data', (chunk) => {
      const parts = (rest + chunk).split('\n');
      rest = parts.pop();
      for (const line of parts) {
        if (!line) continue;
        proc.lines.push(line);
        if (proc.lines.length > KEEP_LINES) proc.lines.shift();
        if (onJson && line.startsWith('{')) {
          try {
            onJson(JSON.parse(line));
          } catch {
            // not a log line
          }
        }
      }
    });
  };
  keep(child.stdout);
  keep(child.stderr);
  running.add(proc);
  proc.exited.then(() => running.delete(proc));
  return proc;
}

export function describeExit(proc) {
  const { exitCode, signalCode } = proc.child;
  const how = signalCode ? `signal ${signalCode}` : `code ${exitCode}`;
  const tail = proc.lines.slice(-20).join('\n  ');
  return `${proc.name} exited (${how})${tail ? `; its last output:\n  ${tail}` : ' without output'}`;
}

/** SIGTERM, then SIGKILL if it has not exited after `graceMs`. */
export async function stop(proc, graceMs = 5000) {
  if (!proc.alive) return proc.exited;
  proc.child.kill('SIGTERM');
  const timer = sleep(graceMs, 'timeout');
  if ((await Promise.race([proc.exited, timer])) === 'timeout') {
    proc.child.kill('SIGKILL');
  }
  return proc.exited;
}

/** Stops every child still running. */
export async function stopAll() {
  await Promise.all([...running].map((p) => stop(p)));
}

/** One HTTP exchange on a fresh connection. Resolves with status, headers and body. */
export function httpRequest(port, { method = 'GET', path = '/', headers = {}, body, timeoutMs = 2000 } = {}) {
  return new Promise((resolve, reject) => {
    const req = request(
      { host: '127.0.0.1', port, method, path, headers, agent: false, timeout: timeoutMs },
      (res) => {
        let text = '';
        res.setEncoding('utf8');
        res.on('data', (c) => (text += c));
        res.on('end', () => resolve({ status: res.statusCode, headers: res.headers, body: text }));
        res.on('error', reject);
      },
    );
    req.on('timeout', () => req.destroy(new Error(`no answer within ${timeoutMs} ms`)));
    req.on('error', reject);
    req.end(body);
  });
}

/** Waits until something answers HTTP on the port (any status), failing if the process exits first. */
export async function waitForHttp(proc, port, timeoutMs = 15_000) {
  const deadline = Date.now() + timeoutMs;
  let lastError;
  while (Date.now() < deadline) {
    if (proc && !proc.alive) throw new Error(describeExit(proc));
    try {
      await httpRequest(port, { path: '/healthz', timeoutMs: 1000 });
      return;
    } catch (err) {
      lastError = err;
      await sleep(50);
    }
  }
  throw new Error(`${proc?.name ?? 'server'} did not answer on port ${port}: ${lastError?.message}`);
}

/** Waits until a Redis on the port answers PING; resolves with a client to it. */
export async function waitForRedis(proc, port, timeoutMs = 10_000) {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    if (!proc.alive) throw new Error(describeExit(proc));
    const client = new Redis({
      host: '127.0.0.1',
      port,
      lazyConnect: true,
      maxRetriesPerRequest: 0,
      retryStrategy: () => null,
    });
    client.on('error', () => {}); // refused until the server is up
    try {
      await client.connect();
      if ((await client.ping()) === 'PONG') return client;
      client.disconnect();
    } catch {
      client.disconnect();
      if (Date.now() > deadline) throw new Error(`redis-server did not answer on port ${port}`);
      await sleep(50);
    }
  }
}
