// `npm run bench:closed-loop`: why the 429 path's CPU per request is a larger multiple of its floor's
// than its instructions are. wrk keeps 32 requests open (a closed loop), so a slower server leaves
// wrk idle more often, and each response then also pays the kernel's wake-up of wrk. This floods
// tollgate's /bench/flood (memory store) and the bare refusal floor, and the floor again made
// slower by SPIN_US of pure user time a 429 (nothing else changed), each server alone on CPU 1,
// and reports user and system CPU µs per response from /proc (all threads), round by round.
// Settings: BENCH_ROUNDS (3), BENCH_DURATION (s, 4), BENCH_SPIN (µs list, default 4,8).
import { readFileSync, readdirSync } from 'node:fs';
import { clockTicks } from './lib/cpu-time.js';
import { wrkLoad } from './lib/load.js';
import { freePort, startNode, stop, stopAll, waitForHttp, httpRequest, onPath } from './lib/processes.js';

const rounds = Number(process.env.BENCH_ROUNDS ?? 3);
const seconds = Number(process.env.BENCH_DURATION ?? 4);
const spins = (process.env.BENCH_SPIN ?? '4,8').split(',').map(Number);
if (!onPath('wrk') || !onPath('taskset')) throw new Error('bench:closed-loop needs wrk and taskset');

/** utime and stime (µs) of every thread of a process. */
function threadTimes(pid) {
  let user = 0;
  let system = 0;
  for (const tid of readdirSync(`/proc/${pid}/task`)) {
    const text = readFileSync(`/proc/${pid}/task/${tid}/stat`, 'utf8');
    const f = text.slice(text.lastIndexOf(')') + 2).split(' ');
    user += Number(f[11]);
    system += Number(f[12]);
  }
  return { user: (user * 1e6) / clockTicks, system: (system * 1e6) / clockTicks };
}

const upstreamPort = await freePort();
const upstream = startNode('upstream', 'bench/servers/upstream.js', { env: { PORT: String(upstreamPort) } });
await waitForHttp(upstream, upstreamPort);

const servers = [
  { id: 'tollgate-429', script: 'dist/cli.js', args: ['start', '--config', 'bench/gateway.yaml'] },
  { id: 'refusal-floor', script: 'bench/servers/refusal-floor.js' },
  ...spins.map((us) => ({ id: `floor + ${us} µs`, script: 'bench/servers/refusal-floor.js', spin: us })),
];

async function measure(server) {
  const port = await freePort();
  const env = {
    PORT: String(port),
    ADMIN_PORT: String(await freePort()),
    UPSTREAM_URL: `http://127.0.0.1:${upstreamPort}`,
    LOG_LEVEL: 'warn',
    SPIN_US: String(server.spin ?? 0),
  };
  const proc = startNode(server.id, server.script, { args: server.args ?? [], env, cpu: 1 });
  try {
    await waitForHttp(proc, port);
    await httpRequest(port, { method: 'POST', path: '/bench/flood', body: '{}' }); // spends the limit of 1
    const load = { port, path: '/bench/flood', connections: 32, body: '{"event":"bench"}' };
    await wrkLoad({ ...load, seconds: 1 }); // warm-up
    const before = threadTimes(proc.child.pid);
    const run = await wrkLoad({ ...load, seconds });
    const after = threadTimes(proc.child.pid);
    return {
      rps: run.rps,
      user: (after.user - before.user) / run.responses,
      system: (after.system - before.system) / run.responses,
    };
  } finally {
    await stop(proc);
  }
}

try {
  console.log(`[bench:closed-loop] ${rounds} round(s) of ${seconds} s, servers on CPU 1, wrk -c32 elsewhere`);
  for (let r = 1; r <= rounds; r++) {
    for (const server of servers) {
      const m = await measure(server);
      console.log(
        `[bench:closed-loop] round ${r} ${server.id.padEnd(16)} ${Math.round(m.rps)} req/s, ` +
          `user ${m.user.toFixed(1)} µs + system ${m.system.toFixed(1)} µs = ${(m.user + m.system).toFixed(1)} µs a response`,
      );
    }
  }
} finally {
  await stopAll();
}
