// The bench's Redis Cluster: three masters (bench/servers/redis-cluster.js) on the shared CPU, and
// a client per master for flushing and for each shard's INFO figures.
import { setTimeout as sleep } from 'node:timers/promises';
import { describeExit, freePort, startNode, waitForRedis } from './processes.js';

/** Free ports, all different. */
async function freePorts(n) {
  const ports = new Set();
  while (ports.size < n) ports.add(await freePort());
  return [...ports];
}

/** Starts the cluster and waits until every master says cluster_state:ok. */
export async function startRedisCluster(timeoutMs = 30_000) {
  const [p1, p2, p3, b1, b2, b3] = await freePorts(6);
  const ports = [p1, p2, p3];
  const proc = startNode('redis-cluster', 'bench/servers/redis-cluster.js', {
    env: { PORTS: ports.join(','), BUS_PORTS: [b1, b2, b3].join(',') },
  });
  const nodes = [];
  for (const port of ports) nodes.push({ port, client: await waitForRedis(proc, port) });
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    if (!proc.alive) throw new Error(describeExit(proc));
    const infos = await Promise.all(nodes.map((n) => n.client.call('CLUSTER', 'INFO')));
    if (infos.every((i) => /cluster_state:ok/.test(String(i)))) break;
    if (Date.now() > deadline) throw new Error('the bench Redis Cluster did not reach cluster_state:ok');
    await sleep(100);
  }
  return { proc, nodes, seeds: ports.map((p) => `127.0.0.1:${p}`).join(',') };
}
