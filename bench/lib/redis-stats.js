// What Redis did during a measured window: commands by name (INFO commandstats) and its CPU time
// (INFO cpu), so the bench can state script calls per response and Redis CPU per response.

/** "cmdstat_evalsha:calls=12,usec=34,..." lines → Map command → calls. */
export function parseCommandStats(info) {
  const calls = new Map();
  for (const line of info.split('\n')) {
    const m = /^cmdstat_([^:]+):calls=(\d+)/.exec(line.trim());
    if (m) calls.set(m[1], Number(m[2]));
  }
  return calls;
}

/** used_cpu_user + used_cpu_sys of redis-server, in µs (INFO reports seconds with 6 decimals). */
export function parseCpuUs(info) {
  const value = (name) => {
    const m = new RegExp(`^${name}:([0-9.]+)`, 'm').exec(info);
    return m ? Number(m[1]) : 0;
  };
  return Math.round((value('used_cpu_user') + value('used_cpu_sys')) * 1e6);
}

export async function redisSnapshot(redis) {
  const [commandstats, cpu] = await Promise.all([redis.info('commandstats'), redis.info('cpu')]);
  return { calls: parseCommandStats(commandstats), cpuUs: parseCpuUs(cpu) };
}

// The bench's own look-ups (these snapshots, its counter reads) are not the server's work.
const OWN_COMMANDS = new Set(['info', 'keys', 'mget', 'ping', 'flushall', 'select', 'client|setinfo']);
const isScript = (name) => name.startsWith('eval') || name.startsWith('fcall');

/** Differences between two snapshots: script calls, other commands, Redis CPU. */
export function redisBetween(before, after) {
  const commands = {};
  let scriptCalls = 0;
  let otherCalls = 0;
  for (const [name, calls] of after.calls) {
    const n = calls - (before.calls.get(name) ?? 0);
    if (n === 0 || OWN_COMMANDS.has(name)) continue;
    commands[name] = n;
    if (isScript(name)) scriptCalls += n;
    else otherCalls += n;
  }
  return { scriptCalls, otherCalls, commands, cpuUs: after.cpuUs - before.cpuUs };
}
