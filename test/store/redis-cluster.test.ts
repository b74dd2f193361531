// The Redis Cluster store through the real gateway, against a real 3-master, 3-replica cluster.
import calculateSlot from 'cluster-key-slot';
import { Pool } from 'undici';
import { describe, expect } from 'vitest';
import { hashPart } from '../../src/identity/hash.js';
import { windowKey } from '../../src/limits/plan.js';
import { storeKind } from '../../src/store/create-store.js';
import { clientAddresses, expectLimited } from '../helpers/clients.js';
import { clusterPairTest } from '../helpers/fixtures.js';
import { gatewayYaml, limitHeaders, send, type Reply } from '../helpers/gateway.js';
import type { SeenRequest } from '../helpers/upstream.js';
import { waitFor } from '../helpers/wait.js';

const MESSAGES = {
  init: 'Too many widget initialization requests. Please try again shortly.',
  shared: 'Shared budget spent: try again in a minute.',
  perIp: 'Too many requests from this address.',
  perAgent: 'Too many requests from this client.',
};
const BIG = 100_000;
const COMMAND_TIMEOUT_MS = 5000;

/**
 * `init` is widget-init in small (two windows, one hash tag); `per-ip` and `per-agent` have
 * different tags, so one request to /split touches two slots; `flow` never refuses, for counting
 * while the cluster changes. The over-limit cache is off where a test must reach the cluster's script.
 * The command timeout is generous: exactness tests must see counting, not the store-error path.
 */
const CONFIG = gatewayYaml(`
shutdown:
  drainTimeout: 1s
store:
  redis: { cluster: '\${REDIS_CLUSTER_NODES}', commandTimeout: ${COMMAND_TIMEOUT_MS}ms, connectTimeout: 5s }
identity:
  trustedProxies: [127.0.0.1]
upstreams:
  app: { url: '\${UPSTREAM_URL}' }
limiters:
  init:
    message: ${JSON.stringify(MESSAGES.init)}
    overLimitCache: false
    windows:
      - { limit: 5, period: 1m, key: [ip, user_agent] }
      - { limit: 8, period: 1h, key: [ip] }
  shared:
    message: ${JSON.stringify(MESSAGES.shared)}
    windows: [{ limit: 50, period: 1m, key: [ip] }]
  per-ip:
    message: ${JSON.stringify(MESSAGES.perIp)}
    overLimitCache: false
    windows: [{ limit: 3, period: 1m, key: [ip] }]
  per-agent:
    message: ${JSON.stringify(MESSAGES.perAgent)}
    overLimitCache: false
    windows: [{ limit: 5, period: 1m, key: [user_agent] }]
  flow:
    windows:
      - { limit: ${BIG}, period: 1m, key: [ip, user_agent] }
      - { limit: ${BIG}, period: 1h, key: [ip] }
routes:
  - { name: init, methods: [POST], paths: [/init], upstream: app, limiters: [init] }
  - { name: shared, paths: ['/shared/*'], upstream: app, limiters: [shared] }
  - { name: split, paths: [/split], upstream: app, limiters: [per-ip, per-agent] }
  - { name: flow, paths: [/flow], upstream: app, limiters: [flow] }
`);

/** `cluster`: a 3-master, 3-replica Redis Cluster of the file's own; `pair`: two gateways counting in it. */
const clusterTest = clusterPairTest(CONFIG);

// Every test has its own client addresses (trusted X-Forwarded-For), so budgets never mix.
const newClient = clientAddresses();

const ipPart = (ip: string) => hashPart(`ip=${ip}`);
const uaPart = (ua: string) => hashPart(`ua=${ua}`);

/** A request through gateway `gateway` (0 or 1) of the pair, from a client. */
type Send = (path: string, ip: string, ua: string, gateway?: number, method?: string) => Promise<Reply>;

/**
 * With the servers: `keyOf`, the store key of window `index` of a limiter, for a client; `get`, a
 * key's value, read from the master that serves its slot; `request`, see Send.
 */
const test = clusterTest
  .extend(
    'keyOf',
    { scope: 'file' },
    ({ pair }) =>
      (name: string, index: number, ip: string, ua = '') =>
        windowKey('tg:', pair[0]!.table.limiters.get(name)!, index, (p) =>
          p === 'ip' ? ipPart(ip) : uaPart(ua),
        ),
  )
  .extend(
    'get',
    { scope: 'file' },
    ({ cluster }) =>
      async (key: string): Promise<string | null> =>
        (await cluster.call(await cluster.nodeForSlot(calculateSlot(key)), 'GET', key)) as string | null,
  )
  .extend(
    'request',
    { scope: 'file' },
    ({ pair }): Send =>
      (path, ip, ua, gateway = 0, method = 'GET') =>
        send(`${pair[gateway]!.url()}${path}`, {
          method,
          headers: { 'x-forwarded-for': ip, 'user-agent': ua },
        }),
  );

const remainingOf = (r: Reply) => Number(r.headers['x-ratelimit-remaining']);

// The first test starts the cluster and the pair: a 6-node cluster on a loaded 2-core machine.
test('store.redis.cluster selects the cluster store', { timeout: 120_000 }, ({ cluster, pair }) => {
  expect(storeKind(pair[0]!.table.config.store)).toBe('redis-cluster');
  expect(pair[0]!.table.config.store.redis.cluster).toEqual(cluster.seeds);
});

describe('exact limits on a cluster', () => {
  test('both windows of a limiter share a slot; the 5th request passes, the 6th gets 429', async ({
    cluster,
    upstream,
    keyOf,
    get,
    request,
  }) => {
    const ip = newClient();
    const minuteA = keyOf('init', 0, ip, 'agent-A');
    const hour = keyOf('init', 1, ip);
    // One hash tag, so one slot, on the client and on the server.
    expect(calculateSlot(minuteA)).toBe(calculateSlot(hour));
    const [port] = cluster.livePorts;
    expect(await cluster.call(port!, 'CLUSTER', 'KEYSLOT', minuteA)).toBe(calculateSlot(hour));
    expect(await cluster.call(port!, 'CLUSTER', 'KEYSLOT', hour)).toBe(calculateSlot(hour));

    const replies: Reply[] = [];
    for (let i = 0; i < 5; i++) replies.push(await request('/init', ip, 'agent-A', i % 2, 'POST'));
    expect(replies.map((r) => r.status)).toEqual([200, 200, 200, 200, 200]);
    expect(replies.map(remainingOf)).toEqual([4, 3, 2, 1, 0]);
    for (const r of replies) expect(r.headers['x-ratelimit-limit']).toBe('5');
    expect(replies.every((r) => r.headers['retry-after'] === undefined)).toBe(true);

    expectLimited(await request('/init', ip, 'agent-A', 0, 'POST'), 5, MESSAGES.init, 60);
    // Refused by the minute window inside one script: the hour window was not counted either.
    expect(await get(minuteA)).toBe('5');
    expect(await get(hour)).toBe('5');

    // Another user agent on the address: its own minute budget, the shared hour budget (8).
    const agentB = [];
    for (let i = 0; i < 3; i++) agentB.push(await request('/init', ip, 'agent-B', 1, 'POST'));
    expect(agentB.map((r) => [r.status, r.headers['x-ratelimit-limit'], remainingOf(r)])).toEqual([
      [200, '8', 2],
      [200, '8', 1],
      [200, '8', 0],
    ]);
    const refused = await request('/init', ip, 'agent-C', 0, 'POST');
    expectLimited(refused, 8, MESSAGES.init, 3600);
    expect(Number(refused.headers['retry-after'])).toBeGreaterThan(3500);
    expect(await get(hour)).toBe('8');
    expect(await get(keyOf('init', 0, ip, 'agent-B'))).toBe('3');
    expect(await get(keyOf('init', 0, ip, 'agent-C'))).toBeNull();
    const from = (s: SeenRequest) => String(s.headers['x-forwarded-for']).split(',')[0];
    expect(upstream.seen.filter((s) => s.url === '/init' && from(s) === ip)).toHaveLength(8);
  });

  test('two gateway instances on one cluster let exactly 50 of 200 concurrent requests through', async ({
    upstream,
    pair,
    keyOf,
    get,
  }) => {
    const ip = newClient();
    const perInstance = 100;
    // One connection per request, so all 200 are in flight at once.
    const pools = pair.map((g) => new Pool(g.url(), { connections: perInstance }));
    try {
      const answers = await Promise.all(
        Array.from({ length: 2 * perInstance }, async (_, i) => {
          const instance = i % 2;
          const reply = await send(`${pair[instance]!.url()}/shared/${i}`, {
            headers: { 'x-forwarded-for': ip },
            dispatcher: pools[instance],
          });
          return { instance, reply };
        }),
      );
      const allowed = answers.filter((a) => a.reply.status === 200);
      const refused = answers.filter((a) => a.reply.status === 429);
      expect(allowed).toHaveLength(50);
      expect(refused).toHaveLength(150);
      // Each allowed request counted exactly once: remaining 49, 48, ..., 0.
      const remaining = allowed.map((a) => remainingOf(a.reply)).sort((a, b) => a - b);
      expect(remaining).toEqual(Array.from({ length: 50 }, (_, i) => i));
      // Both instances took part in letting requests through and refusing them.
      for (const instance of [0, 1]) {
        expect(allowed.some((a) => a.instance === instance)).toBe(true);
        expect(refused.some((a) => a.instance === instance)).toBe(true);
      }
      for (const { reply } of refused) expectLimited(reply, 50, MESSAGES.shared, 60);
      const resets = answers.map((a) => Number(a.reply.headers['x-ratelimit-reset']));
      expect(Math.max(...resets) - Math.min(...resets)).toBeLessThanOrEqual(1);
      expect(await get(keyOf('shared', 0, ip))).toBe('50');
      expect(upstream.seen.filter((s) => s.url.startsWith('/shared/'))).toHaveLength(50);
    } finally {
      await Promise.all(pools.map((p) => p.close()));
    }
  });
});

test('/readyz runs the script on the probe key, on the master that serves its slot', async ({
  pair: [gateway],
  cluster,
}) => {
  const ready = await send(`${gateway!.url()}/readyz`);
  expect([ready.status, ready.text]).toEqual([200, '{"status":"ready"}']);
  const owner = await cluster.nodeForSlot(calculateSlot('tg:readiness-probe'));
  expect(await cluster.call(owner, 'GET', 'tg:readiness-probe')).toBe('0');
  // That master refuses PTTL to the gateway's (default) user: the probe fails there.
  await cluster.call(owner, 'ACL', 'SETUSER', 'default', '-pttl');
  try {
    const refused = await send(`${gateway!.url()}/readyz`);
    expect(refused.status).toBe(503);
    expect((refused.json() as { reason: string }).reason).toMatch(
      /^redis cluster: (ERR The user executing the script can't run this command or subcommand script: tollgate_batch_[0-9a-f]{16}, on @user_function:\d+\.|NOPERM User default has no permissions to run the 'pttl' command.*)$/,
    );
  } finally {
    await cluster.call(owner, 'ACL', 'SETUSER', 'default', '+pttl');
  }
  const again = await send(`${gateway!.url()}/readyz`);
  expect([again.status, again.text]).toEqual([200, '{"status":"ready"}']);
});

test('limiters in different slots decide alone: a request refused by one is still counted by the other', async ({
  cluster,
  upstream,
  keyOf,
  get,
  request,
}) => {
  const [x, y, z] = [newClient(), newClient(), newClient()];
  const ipSlots = new Set([x, y, z].map((ip) => calculateSlot(keyOf('per-ip', 0, ip))));
  // A user agent whose per-agent window sits in another slot than all three per-ip windows.
  let ua = '';
  for (let i = 0; !ua; i++)
    if (!ipSlots.has(calculateSlot(keyOf('per-agent', 0, '', `split-${i}`)))) ua = `split-${i}`;
  const agentKey = keyOf('per-agent', 0, '', ua);
  const [port] = cluster.livePorts;
  expect(await cluster.call(port!, 'CLUSTER', 'KEYSLOT', agentKey)).not.toBe(
    await cluster.call(port!, 'CLUSTER', 'KEYSLOT', keyOf('per-ip', 0, x)),
  );

  const first = [];
  for (let i = 0; i < 3; i++) first.push(await request('/split', x, ua));
  expect(first.map((r) => [r.status, r.headers['x-ratelimit-limit'], remainingOf(r)])).toEqual([
    [200, '3', 2],
    [200, '3', 1],
    [200, '3', 0],
  ]);
  // x's per-ip window is spent: 429. Its slot's script refuses and counts nothing there, but the
  // per-agent window lives in another slot, whose script counts the request (4 of 5).
  expectLimited(await request('/split', x, ua), 3, MESSAGES.perIp, 60);
  expect(await get(keyOf('per-ip', 0, x))).toBe('3');
  expect(await get(agentKey)).toBe('4');

  // So y gets only the one hit left for this user agent...
  const fromY = await request('/split', y, ua);
  expect([fromY.status, limitHeaders(fromY)['x-ratelimit-limit'], remainingOf(fromY)]).toEqual([200, '5', 0]);
  // ...and z is refused by the per-agent window while its own per-ip window is counted.
  expectLimited(await request('/split', z, ua), 5, MESSAGES.perAgent, 60);
  expect(await get(agentKey)).toBe('5');
  expect(await get(keyOf('per-ip', 0, y))).toBe('1');
  expect(await get(keyOf('per-ip', 0, z))).toBe('1');
  expect(upstream.seen.filter((s) => s.url === '/split')).toHaveLength(4);
});

interface Answer {
  readonly client: string;
  readonly reply: Reply;
  readonly sentAt: number;
  readonly ms: number;
}

/** `workers` loops sending /flow requests for the given clients (round robin, both gateways) until stopped. */
function flow(request: Send, clients: readonly { ip: string; ua: string }[], workers: number) {
  const answers: Answer[] = [];
  let stopped = false;
  let n = 0;
  const loop = async () => {
    while (!stopped) {
      const i = n++;
      const c = clients[i % clients.length]!;
      const sentAt = Date.now();
      const reply = await request('/flow', c.ip, c.ua, i % 2);
      answers.push({ client: c.ip, reply, sentAt, ms: Date.now() - sentAt });
    }
  };
  const done = Promise.all(Array.from({ length: workers }, loop));
  return {
    answers,
    async stop() {
      stopped = true;
      await done;
    },
  };
}

/** Waits until at least 12 of the flow's requests sent after `sinceMs` have been answered. */
async function flowing(traffic: ReturnType<typeof flow>, sinceMs: number, what: string): Promise<void> {
  await waitFor(
    () => traffic.answers.filter((a) => a.sentAt > sinceMs).length,
    (n) => n >= 12,
    { what },
  );
}

test('MOVED/ASK during a live slot migration: every request counted exactly once', async ({
  cluster,
  keyOf,
  get,
  request,
}) => {
  const ranges = await cluster.slots();
  const masterOf = (slot: number) => ranges.find((r) => r.from <= slot && slot <= r.to)!.master;
  const mover = { ip: newClient(), ua: 'mover' };
  const slot = calculateSlot(keyOf('flow', 1, mover.ip));
  expect(calculateSlot(keyOf('flow', 0, mover.ip, mover.ua))).toBe(slot);
  const source = masterOf(slot);
  const target = (await cluster.masters()).find((p) => p !== source)!;
  // Clients on other slots of the same master share its auto-pipelines with the moving slot.
  const neighbours = [];
  for (let i = 0; neighbours.length < 4; i++) {
    const ip = `203.0.113.${i + 1}`;
    const s = calculateSlot(keyOf('flow', 1, ip));
    if (s !== slot && masterOf(s) === source) neighbours.push({ ip, ua: 'neighbour' });
  }
  const clients = [mover, mover, ...neighbours];
  for (const c of [mover, ...neighbours]) expect((await request('/flow', c.ip, c.ua)).status).toBe(200);
  await Promise.all(cluster.livePorts.map((p) => cluster.call(p, 'CONFIG', 'RESETSTAT')));

  const traffic = flow(request, clients, 12);
  await flowing(traffic, 0, 'traffic before the migration');
  const started = Date.now();
  const migration = await cluster.migrateSlot(slot, target, 400);
  const finished = Date.now();
  await flowing(traffic, finished, 'traffic after the migration');
  await traffic.stop();

  expect(migration.keys.sort()).toEqual(
    [keyOf('flow', 0, mover.ip, mover.ua), keyOf('flow', 1, mover.ip)].sort(),
  );
  expect(await cluster.nodeForSlot(slot)).toBe(target);
  const during = traffic.answers.filter(
    (a) => a.client === mover.ip && a.sentAt >= started && a.sentAt <= finished,
  );
  expect(during.length).toBeGreaterThan(5);

  // No request lost (every one counted: headers, never the fail-open path) or counted twice: per
  // client, the remaining values are exactly BIG-2, BIG-3, ... (the warm-up took BIG-1).
  for (const c of [mover, ...neighbours]) {
    const mine = traffic.answers.filter((a) => a.client === c.ip);
    expect(
      mine.every((a) => a.reply.status === 200 && a.reply.headers['x-ratelimit-remaining'] !== undefined),
    ).toBe(true);
    const remaining = mine.map((a) => remainingOf(a.reply)).sort((a, b) => b - a);
    expect(remaining).toEqual(Array.from({ length: mine.length }, (_, i) => BIG - 2 - i));
    expect(await get(keyOf('flow', 1, c.ip))).toBe(String(mine.length + 1));
    expect(await get(keyOf('flow', 0, c.ip, c.ua))).toBe(String(mine.length + 1));
  }
  // The gateways met the migration: ASK while keys moved, MOVED once it was done.
  const errorstats = String(await cluster.call(source, 'INFO', 'errorstats'));
  expect(errorstats).toMatch(/errorstat_ASK:count=[1-9]/);
  expect(errorstats).toMatch(/errorstat_MOVED:count=[1-9]/);
}, 60_000);

test('a master killed while requests flow: answers stay prompt, the replica takes over, counting resumes', async ({
  cluster,
  keyOf,
  request,
}) => {
  const client = { ip: newClient(), ua: 'failover' };
  const key = keyOf('flow', 1, client.ip);
  const slot = calculateSlot(key);
  const range = (await cluster.slots()).find((r) => r.from <= slot && slot <= r.to)!;
  const [master, replica] = [range.master, range.replicas[0]!];
  for (let i = 0; i < 3; i++)
    expect(remainingOf(await request('/flow', client.ip, client.ua))).toBe(BIG - 1 - i);

  const traffic = flow(request, [client], 8);
  await flowing(traffic, 0, 'traffic before the kill');
  await cluster.kill(master);
  // The replica is promoted (node timeout 1 s, then an election), and every live node agrees.
  await waitFor(
    () => cluster.nodeForSlot(slot, replica).catch(() => 0),
    (port) => port === replica,
    { timeoutMs: 15_000, intervalMs: 100, what: `replica ${replica} promoted` },
  );
  await cluster.waitHealthy(15_000);
  const healthyAt = Date.now();
  // Counting resumes by itself: wait (bounded) for requests sent after recovery to be counted again.
  await waitFor(
    () =>
      traffic.answers.filter((a) => a.sentAt > healthyAt && a.reply.headers['x-ratelimit-remaining']).length,
    (n) => n >= 10,
    { timeoutMs: 10_000, what: 'counted answers after the failover' },
  );
  await traffic.stop();

  // Every request was answered within the command timeout (plus slack for a loaded machine):
  // counted, or let through without headers (fail-open); never an error or a hang.
  const { answers } = traffic;
  for (const a of answers) expect(a.reply.status).toBe(200);
  expect(Math.max(...answers.map((a) => a.ms))).toBeLessThan(COMMAND_TIMEOUT_MS + 1000);
  expect(
    answers.filter((a) => a.reply.headers['x-ratelimit-remaining'] === undefined).length,
  ).toBeGreaterThan(0);

  // Replication is asynchronous, so hits acknowledged by the dead master may be lost; what is
  // certain is that counting goes on, one per request, on the promoted replica.
  const after: number[] = [];
  for (let i = 0; i < 10; i++) after.push(remainingOf(await request('/flow', client.ip, client.ua, i % 2)));
  for (let i = 1; i < after.length; i++) expect(after[i]).toBe(after[i - 1]! - 1);
  expect(await cluster.call(replica, 'GET', key)).toBe(String(BIG - after.at(-1)!));
  expect(await cluster.call(replica, 'GET', keyOf('flow', 0, client.ip, client.ua))).toBe(
    String(BIG - after.at(-1)!),
  );
}, 90_000);
