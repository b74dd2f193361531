// CPU time of a server under test, read from /proc/<pid>/stat (utime + stime, in clock ticks) of
// the process and all its descendants (cluster workers, nginx workers), so the bench can report
// CPU µs per request beside req/s. Linux only: elsewhere `available` is false.
import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync, readdirSync } from 'node:fs';

export const available = existsSync('/proc/self/stat');

/** Clock ticks per second of utime/stime (sysconf CLK_TCK), read once. */
export const clockTicks = (() => {
  try {
    const n = Number(execFileSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).trim());
    return Number.isInteger(n) && n > 0 ? n : 100;
  } catch {
    return 100;
  }
})();

/** The fields of /proc/<pid>/stat that matter here, or undefined once the process is gone. */
export function readStat(pid) {
  let text;
  try {
    text = readFileSync(`/proc/${pid}/stat`, 'utf8');
  } catch {
    return undefined;
  }
  // The command name (field 2) is in parentheses and may hold spaces: split after the last ')'.
  const close = text.lastIndexOf(')');
  const name = text.slice(text.indexOf('(') + 1, close);
  const f = text.slice(close + 2).split(' '); // f[0] is field 3 (state)
  return { pid: Number(pid), name, ppid: Number(f[1]), ticks: Number(f[11]) + Number(f[12]) };
}

/** The pid and every descendant of it, found by scanning /proc for parent links. */
export function processTree(rootPid) {
  const byParent = new Map();
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    const stat = readStat(entry);
    if (!stat) continue;
    const list = byParent.get(stat.ppid) ?? [];
    list.push(stat.pid);
    byParent.set(stat.ppid, list);
  }
  const tree = [rootPid];
  for (let i = 0; i < tree.length; i++) tree.push(...(byParent.get(tree[i]) ?? []));
  return tree;
}

/** utime + stime of each process of the tree, in ticks: Map pid → { name, ticks }. */
export function sampleTree(rootPid) {
  const sample = new Map();
  for (const pid of processTree(rootPid)) {
    const stat = readStat(pid);
    if (stat) sample.set(pid, { name: stat.name, ticks: stat.ticks });
  }
  return sample;
}

/**
 * CPU spent between two samples of the same tree, in µs, in total and per process. A process that
 * appeared in between counts from zero; one that exited in between is missing from `after` and
 * its time is lost, which the caller sees as a process count change.
 */
export function cpuBetween(before, after) {
  const perProcess = [];
  let totalTicks = 0;
  for (const [pid, a] of after) {
    const ticks = a.ticks - (before.get(pid)?.ticks ?? 0);
    totalTicks += ticks;
    perProcess.push({ pid, name: a.name, cpuUs: (ticks * 1e6) / clockTicks });
  }
  const exited = [...before.keys()].filter((pid) => !after.has(pid)).length;
  return { cpuUs: (totalTicks * 1e6) / clockTicks, perProcess, exited };
}

/** Busy and total ticks of each CPU since boot (/proc/stat), whoever ran on it: Map cpu → ticks. */
export function sampleCpus() {
  const cpus = new Map();
  let text;
  try {
    text = readFileSync('/proc/stat', 'utf8');
  } catch {
    return cpus;
  }
  for (const line of text.split('\n')) {
    const m = /^cpu(\d+) (.*)$/.exec(line);
    if (!m) continue;
    // user nice system idle iowait irq softirq steal (guest time is already in user)
    const [user, nice, system, idle, iowait, irq, softirq, steal = 0] = m[2].split(' ').map(Number);
    const busy = user + nice + system + irq + softirq;
    cpus.set(Number(m[1]), { busy, steal, total: busy + idle + iowait + steal });
  }
  return cpus;
}

/** How busy one CPU was between two samples (all processes), and the share the hypervisor stole. */
export function cpuLoadBetween(before, after, cpu) {
  const a = before.get(cpu);
  const b = after.get(cpu);
  if (!a || !b || b.total === a.total) return undefined;
  const total = b.total - a.total;
  return { busy: (b.busy - a.busy) / total, steal: (b.steal - a.steal) / total };
}
