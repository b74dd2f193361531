// Runs a 3-master Redis Cluster (no replicas: the bench measures the masters' work, and a 2-CPU
// machine has no room for more) for the bench: PORTS and BUS_PORTS (comma-separated, three each),
// no persistence, loopback only. Creates the cluster once every node answers, prints "cluster
// ready", and stops every node when told to (SIGTERM) or when the bench process goes away.
import { execFile, spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { promisify } from 'node:util';

const run = promisify(execFile);
const ports = process.env.PORTS.split(',');
const busPorts = process.env.BUS_PORTS.split(',');
const dir = mkdtempSync(join(tmpdir(), 'tollgate-bench-cluster-'));

const nodes = ports.map((port, i) => {
  const node = spawn(
    'redis-server',
    [
      ...['--port', port, '--cluster-port', busPorts[i], '--bind', '127.0.0.1', '--protected-mode', 'no'],
      ...['--cluster-enabled', 'yes', '--cluster-config-file', join(dir, `nodes-${port}.conf`)],
      ...['--cluster-node-timeout', '5000', '--save', '', '--appendonly', 'no', '--dir', dir],
      ...['--loglevel', 'warning'],
    ],
    { stdio: ['ignore', 'inherit', 'inherit'] },
  );
  node.once('error', (err) => quit(`cannot run redis-server: ${err.message}`));
  node.once('exit', () => quit(`redis-server on ${port} exited`));
  return node;
});

let quitting = false;
function quit(why) {
  if (quitting) return;
  quitting = true;
  if (why) console.error(why);
  for (const n of nodes) if (n.exitCode === null) n.kill('SIGTERM');
  rmSync(dir, { recursive: true, force: true });
  process.exit(why ? 1 : 0);
}
process.once('SIGTERM', () => quit());

const ping = async (port) => {
  try {
    const { stdout } = await run('redis-cli', ['-p', port, 'PING'], { timeout: 2000 });
    return stdout.trim() === 'PONG';
  } catch {
    return false;
  }
};

for (const port of ports) {
  for (let i = 0; !(await ping(port)); i++) {
    if (i > 200) quit(`redis-server on ${port} did not answer`);
    await sleep(50);
  }
}
const addresses = ports.map((p) => `127.0.0.1:${p}`);
await run('redis-cli', ['--cluster', 'create', ...addresses, '--cluster-replicas', '0', '--cluster-yes'], {
  timeout: 30_000,
});
console.log('cluster ready');
