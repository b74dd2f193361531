// PROTOTYPE, not used by src/: what ioredis costs per batched script call, against a minimal RESP
// client on one socket. The same batch (tollgate's batch script, its arguments and reply parsing
// from dist/store/) is sent CALLS times, one call in flight, as the batching store sends one call
// per turn. Each client runs in its own node under callgrind (main thread), instrumentation on for
// the measured calls only; the figure is the main thread's instructions per call, event loop and
// socket system calls included (the same for every client).
//
//   flock /tmp/bench.lock timeout 900 nice -n 10 node bench/resp-prototype.js
//
// Env: CLIENTS (ioredis,raw,...: see CLIENTS below), BATCH (14), SHAPE (one-client: one key, one
// run; own-keys: each request its own key), WARMUP (20000), CALLS (5000), RUNS (2).
import { execFileSync, spawn, spawnSync } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync } from 'node:fs';
import { once } from 'node:events';
import { connect } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { Redis } from 'ioredis';
import { ROOT, freePort } from './lib/processes.js';
import { BATCH_WINDOW_LUA, batchScriptArgs, parseBatchReply } from '../dist/store/batch-window-script.js';
import { runLengths } from '../dist/store/batch-window-runs.js';
import { redisClientOptions } from '../dist/store/redis-store.js';

/** A minimal RESP2 client: commands written as one string, replies (flat or nested arrays) read. */
class RawRedis {
  #socket;
  #waiting = []; // callbacks in the order their commands were written
  #buf = undefined;
  constructor(port) {
    this.#socket = connect(port, '127.0.0.1');
    this.#socket.setNoDelay(true);
    this.#socket.on('data', (chunk) => this.#read(chunk));
  }
  ready() {
    return new Promise((resolve) => this.#socket.once('connect', resolve));
  }
  call(args, callback) {
    let s = `*${args.length}\r\n`;
    for (const a of args) {
      const v = typeof a === 'string' ? a : String(a);
      s += `$${Buffer.byteLength(v)}\r\n${v}\r\n`;
    }
    this.#waiting.push(callback);
    this.#socket.write(s);
  }
  #read(chunk) {
    const buf = this.#buf === undefined ? chunk : Buffer.concat([this.#buf, chunk]);
    let at = 0;
    while (at < buf.length) {
      const value = parseValue(buf, at);
      if (value === undefined) break; // incomplete: wait for more
      at = value.end;
      const callback = this.#waiting.shift();
      if (value.error) callback(new Error(value.value), undefined);
      else callback(undefined, value.value);
    }
    this.#buf = at < buf.length ? buf.subarray(at) : undefined;
  }
  close() {
    this.#socket.end();
  }
}

/** The RESP value at `at`: { value, end, error? }, or undefined when `buf` ends first. */
function parseValue(buf, at) {
  const eol = buf.indexOf(13, at);
  if (eol < 0 || eol + 1 >= buf.length) return undefined;
  const type = buf[at];
  if (type === 58 /* : */) return { value: intAt(buf, at + 1, eol), end: eol + 2 };
  if (type === 36 /* $ */) {
    const n = intAt(buf, at + 1, eol);
    if (n < 0) return { value: null, end: eol + 2 };
    if (eol + 2 + n + 2 > buf.length) return undefined;
    return { value: buf.latin1Slice(eol + 2, eol + 2 + n), end: eol + 4 + n };
  }
  if (type === 42 /* * */) {
    const n = intAt(buf, at + 1, eol);
    const values = new Array(n);
    let end = eol + 2;
    for (let i = 0; i < n; i++) {
      const item = parseValue(buf, end);
      if (item === undefined) return undefined;
      values[i] = item.value;
      end = item.end;
    }
    return { value: values, end };
  }
  const text = buf.latin1Slice(at + 1, eol);
  return { value: text, end: eol + 2, error: type === 45 /* - */ };
}

function intAt(buf, from, to) {
  let negative = false;
  if (buf[from] === 45) {
    negative = true;
    from++;
  }
  let n = 0;
  for (let i = from; i < to; i++) n = n * 10 + buf[i] - 48;
  return negative ? -n : n;
}

/** Each client: connect(port) -> (args, callback) => void, sending EVALSHA with tollgate's script. */
const CLIENTS = {
  // As the gateway: defineCommand, its client options (no auto-pipelining).
  ioredis: (port) => ioredisClient(port, {}),
  'ioredis-autopipelining': (port) => ioredisClient(port, { enableAutoPipelining: true }),
  'ioredis-stringnumbers': (port) => ioredisClient(port, { stringNumbers: true }),
  // The Buffer variant defineCommand adds: replies' strings as Buffers.
  'ioredis-buffer': (port) => ioredisClient(port, {}, 'tollgateWindowBatchBuffer'),
  // ioredis' generic call() with EVALSHA, no Script wrapper (NOSCRIPT not handled).
  'ioredis-call': async (port) => {
    const client = new Redis({ port, host: '127.0.0.1', ...redisClientOptions({ connectTimeoutMs: 2000 }) });
    await once(client, 'ready');
    const sha = await client.script('LOAD', BATCH_WINDOW_LUA);
    return {
      send: (args, cb) => client.call('evalsha', sha, ...args).then((r) => cb(undefined, r), cb),
      close: () => client.quit(),
    };
  },
  raw: async (port) => {
    const client = new RawRedis(port);
    await client.ready();
    const sha = await new Promise((resolve, reject) =>
      client.call(['SCRIPT', 'LOAD', BATCH_WINDOW_LUA], (err, v) => (err ? reject(err) : resolve(v))),
    );
    return { send: (args, cb) => client.call(['EVALSHA', sha, ...args], cb), close: () => client.close() };
  },
};

async function ioredisClient(port, options, command = 'tollgateWindowBatch') {
  const client = new Redis({
    port,
    host: '127.0.0.1',
    ...redisClientOptions({ connectTimeoutMs: 2000 }),
    ...options,
  });
  client.defineCommand('tollgateWindowBatch', { lua: BATCH_WINDOW_LUA });
  await once(client, 'ready'); // no offline queue, as the gateway's
  return {
    send: (args, cb) => client[command](...args).then((r) => cb(undefined, r), cb),
    close: () => client.quit(),
  };
}

function batchOf(size, shape) {
  const window = (key) => ({ key, limit: 1_000_000_000, periodMs: 3_600_000, enforce: true });
  const one = [window('tg:bench-forward:127.0.0.1')];
  return Array.from({ length: size }, (_, i) =>
    shape === 'own-keys' ? [window(`tg:bench-forward:10.0.${i >> 8}.${i & 255}`)] : one,
  );
}

async function child() {
  const port = Number(process.env.REDIS_PORT);
  const client = await CLIENTS[process.env.CLIENT](port);
  const batch = batchOf(Number(process.env.BATCH), process.env.SHAPE);
  // One call as the store makes it: the arguments built, the reply parsed into each request's results.
  const once = () =>
    new Promise((resolve, reject) => {
      const runs = runLengths(batch);
      client.send(batchScriptArgs(batch, undefined, runs), (err, reply) => {
        if (err) return reject(err);
        const results = parseBatchReply(batch, reply, Date.now(), runs);
        if (results.length !== batch.length) reject(new Error('short reply'));
        else setImmediate(resolve); // the next call from a later turn, as the gateway's
      });
    });
  const repeat = async (n) => {
    for (let i = 0; i < n; i++) await once();
  };
  // SHOW=1: the reply of one call, to compare the clients' decoding.
  if (process.env.SHOW === '1')
    client.send(batchScriptArgs(batch, 0, runLengths(batch)), (err, reply) =>
      console.log(JSON.stringify(err?.message ?? reply)),
    );
  await repeat(Number(process.env.WARMUP));
  // CALLGRIND=0: a quick check of a client outside valgrind.
  const toggle = (on) =>
    process.env.CALLGRIND !== '0' &&
    execFileSync('callgrind_control', ['-i', on, String(process.pid)], { stdio: 'ignore' });
  toggle('on');
  await repeat(Number(process.env.CALLS));
  toggle('off');
  await client.close();
}

async function main() {
  const clients = (process.env.CLIENTS ?? 'ioredis,raw').split(',');
  const batch = Number(process.env.BATCH ?? 14);
  const shape = process.env.SHAPE ?? 'one-client';
  const calls = Number(process.env.CALLS ?? 5000);
  const runs = Number(process.env.RUNS ?? 2);
  const port = await freePort();
  const redis = spawn(
    'redis-server',
    ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no'],
    {
      stdio: 'ignore',
    },
  );
  try {
    await sleep(300);
    const out = mkdtempSync(join(tmpdir(), 'resp-proto-'));
    for (let r = 0; r < runs; r++)
      for (const name of clients) {
        const file = join(out, `${name}.${r}`);
        const res = spawnSync(
          'valgrind',
          [
            '--tool=callgrind',
            '--instr-atstart=no',
            '--separate-threads=yes',
            '--dump-instr=no',
            `--callgrind-out-file=${file}.%p`,
            process.execPath,
            'bench/resp-prototype.js',
            '--child',
          ],
          {
            cwd: ROOT,
            env: {
              ...process.env,
              CLIENT: name,
              REDIS_PORT: String(port),
              BATCH: String(batch),
              SHAPE: shape,
              WARMUP: process.env.WARMUP ?? '20000',
              CALLS: String(calls),
            },
            stdio: ['ignore', 'ignore', 'pipe'],
            encoding: 'utf8',
          },
        );
        if (res.status !== 0) throw new Error(`${name}: exit ${res.status}\n${res.stderr.slice(-2000)}`);
        const mainThread = readdirSync(out)
          .filter((f) => f.startsWith(`${name}.${r}.`) && f.endsWith('-01'))
          .map((f) => readFileSync(join(out, f), 'utf8'))[0];
        const ir = Number(/^totals:\s+(\d+)/m.exec(mainThread)[1]);
        console.log(
          JSON.stringify({
            client: name,
            run: r,
            batch,
            shape,
            calls,
            instructionsPerCall: Math.round(ir / calls),
            out,
          }),
        );
      }
  } finally {
    redis.kill('SIGTERM');
  }
}

if (process.argv.includes('--child')) await child();
else await main();
