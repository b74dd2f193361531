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

/** A snapshot of every master of a Redis Cluster ({ port, client } each). */
export function shardSnapshots(nodes) {
  return Promise.all(nodes.map((n) => redisSnapshot(n.client)));
}

/**
 * Each master's work over a window, per response (script calls and Redis CPU), and their sum:
 * what sizes each shard of a cluster, and the cluster as a whole.
 */
export function shardsBetween(nodes, before, after, responses) {
  const shards = nodes.map((n, i) => {
    const d = redisBetween(before[i], after[i]);
    return {
      port: n.port,
      scriptCalls: d.scriptCalls,
      commands: d.commands,
      scriptCallsPerResponse: d.scriptCalls / responses,
      cpuPerReq: d.cpuUs / responses,
    };
  });
  const commands = {};
  for (const s of shards)
    for (const [name, n] of Object.entries(s.commands)) commands[name] = (commands[name] ?? 0) + n;
  const scriptCalls = shards.reduce((sum, s) => sum + s.scriptCalls, 0);
  return {
    shards,
    total: {
      scriptCalls,
      otherCalls: Object.values(commands).reduce((sum, n) => sum + n, 0) - scriptCalls,
      commands,
      scriptCallsPerResponse: scriptCalls / responses,
      cpuPerReq: shards.reduce((sum, s) => sum + s.cpuPerReq, 0),
    },
  };
}
