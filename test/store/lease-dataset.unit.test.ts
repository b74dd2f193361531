// How a store tells its leasing store that a Redis came back without its data (DatasetWatch in
// src/store/redis-connection.ts), and what the leasing store does with it: INFO replication read
// at each 'ready', compared by address (a Redis Cluster node: by its id); a history of its own (restarted empty) or an unreadable
// INFO drops the slices held; the same history, or a replica promoted from it, keeps them.
import { EventEmitter } from 'node:events';
import { describe, expect, test } from 'vitest';
import { leaseSlice } from '../../src/limits/window-maths/lease.js';
import type { LeaseAsk, LeaseBackend, LeaseGrant } from '../../src/store/lease-script.js';
import { LeasingStore } from '../../src/store/leasing-store.js';
import { MemoryStore } from '../../src/store/memory-store.js';
import {
  continues,
  DatasetWatch,
  lineageOf,
  type KeysOn,
  type NodeId,
  type WatchedConnection,
} from '../../src/store/redis-connection.js';
import type { WindowRequest } from '../../src/store/window-store.js';

const ZEROS = '0'.repeat(40);
const A = 'a'.repeat(40);
const B = 'b'.repeat(40);
const C = 'c'.repeat(40);

/** INFO replication as Redis 7 writes it (CRLF lines). */
const info = (id: string, previous = ZEROS) =>
  [
    '# Replication',
    'role:master',
    'connected_slaves:0',
    `master_replid:${id}`,
    `master_replid2:${previous}`,
    'master_repl_offset:0',
    '',
  ].join('\r\n');

/** A connection whose INFO answers what the test queues (a string, or an error), in order. */
class FakeConnection extends EventEmitter implements WatchedConnection {
  readonly answers: (string | Error)[] = [];
  #pending: ((answer: string | Error) => void) | undefined;
  /** Held: INFO waits for answer(). */
  hold = false;

  override on(event: 'ready', listener: () => void): this {
    return super.on(event, listener);
  }

  info(): Promise<string> {
    return new Promise((resolve, reject) => {
      const settle = (a: string | Error) => (a instanceof Error ? reject(a) : resolve(a));
      if (this.hold) this.#pending = settle;
      else settle(this.answers.shift()!);
    });
  }

  answer(a: string | Error): void {
    this.hold = false;
    this.#pending?.(a);
  }

  /** Emits 'ready' with `answer` as INFO's reply, and lets the check finish. */
  async ready(answer: string | Error): Promise<void> {
    this.answers.push(answer);
    this.emit('ready');
    await flush();
  }
}

const flush = () => new Promise((resolve) => setImmediate(resolve));

function watched(keys: KeysOn = () => true) {
  const watch = new DatasetWatch();
  const lost: KeysOn[] = [];
  watch.onLost((k) => lost.push(k));
  const conn = new FakeConnection();
  watch.watch(conn, '127.0.0.1:6379', keys);
  return { watch, lost, conn };
}

describe('lineage', () => {
  test('read from INFO replication; absent fields: none', () => {
    expect(lineageOf(info(A, B))).toEqual({ id: A, previous: B });
    expect(lineageOf('# Replication\r\nrole:master\r\n')).toBeUndefined();
  });

  test('the same history, or a replica promoted from it, continues; a new one does not', () => {
    expect(continues({ id: A, previous: ZEROS }, { id: A, previous: ZEROS })).toBe(true);
    expect(continues({ id: A, previous: ZEROS }, { id: B, previous: A })).toBe(true);
    expect(continues({ id: A, previous: ZEROS }, { id: B, previous: ZEROS })).toBe(false);
    expect(continues({ id: A, previous: C }, { id: B, previous: C })).toBe(false);
  });
});

describe('DatasetWatch', () => {
  test('the first connection to an address: nothing lost', async () => {
    const { lost, conn } = watched();
    await conn.ready(info(A));
    expect(lost).toEqual([]);
  });

  test('a reconnect to the same server, or to a replica promoted in its place: nothing lost', async () => {
    const { lost, conn } = watched();
    await conn.ready(info(A));
    await conn.ready(info(A));
    await conn.ready(info(B, A));
    await conn.ready(info(B, A));
    expect(lost).toEqual([]);
  });

  test('a server restarted empty: lost, with the keys the connection serves', async () => {
    const keys: KeysOn = (key) => key.startsWith('x');
    const { lost, conn } = watched(keys);
    await conn.ready(info(A));
    await conn.ready(info(B));
    expect(lost).toEqual([keys]);
    await conn.ready(info(B)); // and then known
    expect(lost).toHaveLength(1);
  });

  test('an INFO that cannot be read (refused, or the connection lost again): lost', async () => {
    const { lost, conn } = watched();
    await conn.ready(info(A));
    await conn.ready(new Error('NOPERM'));
    expect(lost).toHaveLength(1);
    await conn.ready(info(A)); // not known since: lost again (nothing is held by then)
    expect(lost).toHaveLength(2);
  });

  test('checking from each reconnect until INFO answers (the first connection: not)', async () => {
    const { watch, conn } = watched();
    conn.hold = true;
    conn.emit('ready');
    expect(watch.checking).toBe(false);
    conn.answer(info(A));
    await flush();
    conn.hold = true;
    conn.emit('ready');
    expect(watch.checking).toBe(true);
    conn.answer(info(A));
    await flush();
    expect(watch.checking).toBe(false);
  });
});

describe('DatasetWatch, cluster nodes named by their id and their address', () => {
  /** A watch of connections, each to [address, id lookup]: the keys each serves are its index. */
  function nodes(...servers: [string, NodeId][]) {
    const watch = new DatasetWatch();
    const lost: KeysOn[] = [];
    watch.onLost((k) => lost.push(k));
    const conns = servers.map(([address, id], i) => {
      const conn = new FakeConnection();
      watch.watch(conn, address, (key) => key === String(i), id);
      return conn;
    });
    return { watch, lost, conns };
  }
  const id = (name: string | undefined) => () => Promise.resolve(name);

  test('a node back empty at a new address, its id kept: lost, with the keys the new connection serves', async () => {
    const { lost, conns } = nodes(['a:1', id('n1')], ['b:2', id('n1')]);
    await conns[0]!.ready(info(A));
    expect(lost).toEqual([]);
    await conns[1]!.ready(info(B));
    expect(lost.map((keys) => keys('1'))).toEqual([true]);
  });

  test('a node back empty at its address with a new id (nodes.conf lost): lost, by the address', async () => {
    const { lost, conns } = nodes(['a:1', id('n1')], ['a:1', id('n9')]);
    await conns[0]!.ready(info(A));
    await conns[1]!.ready(info(B));
    expect(lost.map((keys) => keys('1'))).toEqual([true]);
  });

  test('the same node, its data kept, at a new address: nothing lost; another node first seen: nothing lost', async () => {
    const { lost, conns } = nodes(['a:1', id('n1')], ['b:2', id('n1')], ['c:3', id('n2')]);
    await conns[0]!.ready(info(A));
    await conns[1]!.ready(info(A));
    await conns[2]!.ready(info(B));
    expect(lost).toEqual([]);
  });

  test('an id the ACL refuses (undefined): named by its address alone, as one Redis is', async () => {
    const { lost, conns } = nodes(['a:1', id(undefined)]);
    await conns[0]!.ready(info(A));
    await conns[0]!.ready(info(A));
    expect(lost).toEqual([]);
    await conns[0]!.ready(info(B));
    expect(lost).toHaveLength(1);
  });

  test('checking while the id is asked, even at a first connection; an id that cannot be read: lost', async () => {
    let answer: (id: string) => void = () => {};
    let refuse = false;
    const { watch, lost, conns } = nodes([
      'a:1',
      () => (refuse ? Promise.reject(new Error('Connection is closed.')) : new Promise((r) => (answer = r))),
    ]);
    conns[0]!.answers.push(info(A));
    conns[0]!.emit('ready');
    expect(watch.checking).toBe(true);
    answer('n1');
    await flush();
    expect(watch.checking).toBe(false);
    refuse = true;
    await conns[0]!.ready(info(A));
    expect([lost.length, watch.checking]).toEqual([1, false]);
  });
});

const PERIOD = 60_000;
const hot: WindowRequest = {
  key: 'hot',
  limit: 1000,
  periodMs: PERIOD,
  enforce: true,
  cacheWhenSpent: false,
  lease: { max: 10, spread: 1 },
};

/** The lease script over the memory store's counters, with a dataset watch on a fake connection. */
class Backend implements LeaseBackend {
  readonly dataset = new DatasetWatch();
  readonly conn = new FakeConnection();
  leases = 0;
  returns: number[] = [];
  constructor(private readonly counts: MemoryStore) {
    this.dataset.watch(this.conn, '127.0.0.1:6379', () => true);
  }

  async lease(a: LeaseAsk): Promise<LeaseGrant> {
    this.leases++;
    const count = await this.count(a.key, 0);
    const slice = leaseSlice(a.limit - count, a.divisor, a.max, a.need);
    return { slice, count: await this.count(a.key, slice), ttlMs: PERIOD, endsAt: 1_000_000 };
  }

  async returnLease(_key: string, unspent: number): Promise<number> {
    this.returns.push(unspent);
    return unspent;
  }

  async count(key: string, cost: number): Promise<number> {
    const at = { key, limit: 1, periodMs: PERIOD, enforce: false, cacheWhenSpent: false, cost };
    return (await this.counts.hit([at]))[0]!.count;
  }
}

describe('LeasingStore on a Redis that came back', () => {
  async function leased() {
    const counts = new MemoryStore({ maxKeys: 100, sweepIntervalMs: 60_000 });
    const backend = new Backend(counts);
    const store = new LeasingStore(counts, backend, { timeoutMs: 5000, instances: () => 1 });
    await backend.conn.ready(info(A));
    expect((await store.hit([hot]))[0]!.allowed).toBe(true);
    expect(store.unspentOf('hot')).toBe(9);
    return { backend, store };
  }

  test('without its data: the slice is dropped, never spent nor given back; the window leases afresh', async () => {
    const { backend, store } = await leased();
    await backend.conn.ready(info(B));
    expect(store.unspentOf('hot')).toBe(0);
    expect(store.windows).toBe(0);
    expect((await store.hit([hot]))[0]!.allowed).toBe(true);
    expect(backend.leases).toBe(2);
    expect(store.unspentOf('hot')).toBe(9);
    await store.close();
    expect(backend.returns).toEqual([9]); // the new slice's rest only
  });

  test('with its data (a promoted replica): the slice is spent on', async () => {
    const { backend, store } = await leased();
    await backend.conn.ready(info(B, A));
    expect((await store.hit([hot]))[0]!.allowed).toBe(true);
    expect(backend.leases).toBe(1);
    expect(store.unspentOf('hot')).toBe(8);
    await store.close();
  });

  test('while the server is checked, requests are counted exactly, the slice untouched', async () => {
    const { backend, store } = await leased();
    backend.conn.hold = true;
    backend.conn.emit('ready');
    expect((await store.hit([hot]))[0]!.allowed).toBe(true);
    expect(store.unspentOf('hot')).toBe(9);
    expect(await backend.count('hot', 0)).toBe(11); // the slice of 10, and this request
    backend.conn.answer(info(A));
    await flush();
    expect((await store.hit([hot]))[0]!.allowed).toBe(true);
    expect(store.unspentOf('hot')).toBe(8);
    expect(backend.leases).toBe(1);
    await store.close();
  });

  test('closing while the server is checked: nothing given back (it may be a new, empty window)', async () => {
    const { backend, store } = await leased();
    backend.conn.hold = true;
    backend.conn.emit('ready');
    await store.close();
    expect(backend.returns).toEqual([]);
    backend.conn.answer(info(B));
    await flush();
  });
});
