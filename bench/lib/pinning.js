// Where each process of the bench runs. With taskset and at least two CPUs allowed to this process,
// the server under test gets one CPU to itself and everything else (the bench runner, wrk, the
// upstream, Redis) shares another, so the server's CPU per request is what limits its throughput.
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { onPath } from './processes.js';

/** "0-2,5" → [0, 1, 2, 5] */
export function parseCpuList(text) {
  const cpus = [];
  for (const part of text.trim().split(',')) {
    if (part === '') continue;
    const [from, to = from] = part.split('-').map(Number);
    if (!Number.isInteger(from) || !Number.isInteger(to) || to < from) {
      throw new Error(`unreadable CPU list "${text}"`);
    }
    for (let c = from; c <= to; c++) cpus.push(c);
  }
  return cpus;
}

/** The CPUs this process may run on (its affinity, which a container's cpuset also narrows). */
function allowedCpus() {
  try {
    const status = readFileSync('/proc/self/status', 'utf8');
    const line = status.split('\n').find((l) => l.startsWith('Cpus_allowed_list:'));
    if (line) return parseCpuList(line.slice('Cpus_allowed_list:'.length));
  } catch {
    // not Linux: no /proc
  }
  return [];
}

/**
 * Decides the placement. BENCH_PIN=0 turns pinning off. Returns { pinned, serverCpu, restCpu,
 * statement } where statement says in one sentence what was done, for the report.
 */
export function planPinning(loadGenerator, env = process.env) {
  const cpus = allowedCpus();
  const unpinned = (why) => ({
    pinned: false,
    cpus: cpus.length,
    statement: `Not pinned (${why}): the server under test, the load generator (${loadGenerator}), the upstream and Redis share the machine's CPUs, so req/s and CPU µs per request both include contention.`,
  });
  if (env.BENCH_PIN === '0') return unpinned('BENCH_PIN=0');
  if (!onPath('taskset')) return unpinned('taskset is not installed; Debian: apt-get install util-linux');
  if (cpus.length < 2) return unpinned(`only ${cpus.length || 'an unknown number of'} CPU(s) available`);
  const [restCpu, serverCpu] = cpus;
  return {
    pinned: true,
    cpus: cpus.length,
    serverCpu,
    restCpu,
    statement:
      `Pinned with taskset: the server under test alone on CPU ${serverCpu} (all its threads, and for ` +
      `workers: 2 both workers and the primary), and the bench runner, the load generator (${loadGenerator}), ` +
      `the upstream and Redis on ` +
      `CPU ${restCpu}.` +
      (cpus.length > 2 ? ` The other ${cpus.length - 2} CPU(s) are left unused.` : ''),
  };
}

/** Moves every thread of a running process onto one CPU (its future children inherit it). */
export function pinProcess(pid, cpu) {
  execFileSync('taskset', ['-a', '-pc', String(cpu), String(pid)], { stdio: 'ignore' });
}

/** The CPUs a running process (its main thread) may use, as taskset reports them. */
export function affinityOf(pid) {
  const out = execFileSync('taskset', ['-pc', String(pid)], { encoding: 'utf8' });
  return out.slice(out.lastIndexOf(':') + 1).trim();
}
