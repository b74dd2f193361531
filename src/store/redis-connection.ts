import { readFileSync } from 'node:fs';
import type { ConnectionOptions } from 'node:tls';
import type { RedisTlsConfig } from '../config/schema.js';

/** A store setting that cannot work (a wrong password, an untrusted certificate): the start fails with it. */
export class StoreConfigError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'StoreConfigError';
  }
}

/** The URL with its password replaced by "***", for messages and logs; the user name is kept. */
export function redactedUrl(url: string): string {
  try {
    const u = new URL(url);
    if (u.password) u.password = '***';
    return u.toString().replace(/\/$/, '');
  } catch {
    return '(unparsable url)';
  }
}

/** A cluster seed for messages: a URL redacted, a bare host:port as it is. */
export const redactedSeed = (seed: string): string =>
  /^rediss?:\/\//i.test(seed) ? redactedUrl(seed) : seed;

/** The scheme says whether to speak TLS: rediss:// does, redis:// and a bare host:port do not. */
export const isTlsUrl = (url: string): boolean => /^rediss:\/\//i.test(url);

/** Cluster seeds as the Cluster client takes them, with the credentials and TLS every node shares. */
export interface ClusterSeeds {
  readonly nodes: { host: string; port: number }[];
  readonly username: string | undefined;
  readonly password: string | undefined;
  readonly tls: boolean;
  /** The seeds for messages, passwords redacted. */
  readonly described: string;
}

/**
 * Parses "host:port" seeds, or redis:// and rediss:// URLs with an optional user and password.
 * Nodes discovered later get the same settings, so every seed must agree on them.
 */
export function clusterSeeds(seeds: readonly string[]): ClusterSeeds {
  const parsed = seeds.map((seed) => {
    const url = new URL(/^rediss?:\/\//i.test(seed) ? seed : `redis://${seed}`);
    return {
      host: url.hostname.replace(/^\[|\]$/g, ''),
      port: url.port ? Number(url.port) : 6379,
      username: url.username ? decodeURIComponent(url.username) : undefined,
      password: url.password ? decodeURIComponent(url.password) : undefined,
      tls: url.protocol === 'rediss:',
    };
  });
  const first = parsed[0]!;
  if (
    parsed.some((p) => p.tls !== first.tls || p.username !== first.username || p.password !== first.password)
  ) {
    throw new StoreConfigError(
      'store.redis.cluster: every seed must have the same scheme (redis:// or rediss://), user and password',
    );
  }
  return {
    nodes: parsed.map(({ host, port }) => ({ host, port })),
    username: first.username,
    password: first.password,
    tls: first.tls,
    described: seeds.map(redactedSeed).join(','),
  };
}

/** The TLS options of the store's connections, files read now (a missing file fails the start, named). */
export function tlsOptions(
  tls: RedisTlsConfig,
  read: (file: string) => Buffer = readFileSync,
): ConnectionOptions {
  const file = (field: keyof RedisTlsConfig) => {
    try {
      return read(tls[field]);
    } catch (err) {
      throw new StoreConfigError(
        `store.redis.tls.${field}: cannot read ${tls[field]}: ${(err as Error).message}`,
      );
    }
  };
  if (Boolean(tls.certFile) !== Boolean(tls.keyFile)) {
    throw new StoreConfigError('store.redis.tls: certFile and keyFile go together');
  }
  return {
    ...(tls.caFile ? { ca: file('caFile') } : {}),
    ...(tls.serverName ? { servername: tls.serverName } : {}),
    ...(tls.certFile ? { cert: file('certFile'), key: file('keyFile') } : {}),
  };
}

/** Whether tls settings were given at all (they need a rediss:// url or cluster). */
export const hasTlsSettings = (tls: RedisTlsConfig): boolean =>
  Boolean(tls.caFile || tls.serverName || tls.certFile || tls.keyFile);

// Node's codes for a certificate that cannot be trusted or does not name the server.
const CERTIFICATE_CODES = new Set([
  'DEPTH_ZERO_SELF_SIGNED_CERT',
  'SELF_SIGNED_CERT_IN_CHAIN',
  'UNABLE_TO_VERIFY_LEAF_SIGNATURE',
  'UNABLE_TO_GET_ISSUER_CERT_LOCALLY',
  'CERT_HAS_EXPIRED',
  'CERT_NOT_YET_VALID',
  'ERR_TLS_CERT_ALTNAME_INVALID',
]);

/**
 * Why a connection error means the settings are wrong rather than Redis being away, or undefined
 * for a transient error (refused, reset, timed out), which the store rides out by reconnecting.
 * Only the error's message and code are read: ioredis attaches the AUTH command (and so the
 * password) to the error object itself.
 */
export function settingsFault(err: unknown): string | undefined {
  const { message = '', code } = (err ?? {}) as { message?: string; code?: string };
  if (/\b(WRONGPASS|NOAUTH|NOPERM)\b/.test(message) || /invalid (username-)?password/i.test(message)) {
    return `authentication failed (${message})`;
  }
  if (code && CERTIFICATE_CODES.has(code)) return `TLS certificate refused (${code}: ${message})`;
  if (/wrong version number|packet length too long|unknown protocol/i.test(message)) {
    return `TLS handshake failed (${message}): does the server speak TLS on this port?`;
  }
  return undefined;
}

/** A Redis server's data history, from INFO replication (docs/limiting.md#leases, "When Redis is lost"). */
export interface Lineage {
  /** master_replid: the history of this server's data (a replica carries its master's). */
  readonly id: string;
  /** master_replid2: the history a promoted replica carries on (its old master's); zeros when none. */
  readonly previous: string;
}

/** The lineage INFO replication reports, or undefined when the fields are missing. */
export function lineageOf(info: string): Lineage | undefined {
  const id = /^master_replid:(\w+)/m.exec(info)?.[1];
  return id ? { id, previous: /^master_replid2:(\w+)/m.exec(info)?.[1] ?? '' } : undefined;
}

/**
 * Whether a server reached after a reconnect holds the data of the one before it: the same history
 * (the same process, or one restarted from its own snapshot), or a replica of it promoted in its
 * place. A server restarted empty starts a history of its own.
 */
export const continues = (before: Lineage, after: Lineage): boolean =>
  after.id === before.id || after.previous === before.id;

/** Which keys a lost server held: every key (one Redis), or those of its slots (a cluster master). */
export type KeysOn = (key: string) => boolean;

/** What DatasetWatch needs of a connection: its 'ready', and INFO. */
export interface WatchedConnection {
  on(event: 'ready', listener: () => void): unknown;
  info(section: 'replication'): Promise<string>;
}

/**
 * A Redis Cluster node's id (CLUSTER MYID), which a master keeps in its nodes.conf when it comes
 * back at a new address; undefined when the ACL refuses it (the address alone names the node then).
 */
export type NodeId = () => Promise<string | undefined>;

/**
 * How a store tells its leasing store that a Redis came back without its data (restarted empty):
 * at each 'ready' of a watched connection, INFO replication is read and compared with what the
 * same server had before: the same address, or the same node id (a cluster master back at a new
 * address); a new id at a known address is compared with what that address had. A slice leased
 * from the lost data is no longer counted anywhere, so it must not be spent. Until the answer,
 * `checking` is true (held slices are not spent); an answer that cannot be read (INFO or the id
 * refused, the connection lost again) counts as lost: dropping slices only under-admits.
 */
export class DatasetWatch {
  /** Checks in flight. */
  #checking = 0;
  /** By address and by node id; null: not known (INFO could not be read). */
  readonly #lineages = new Map<string, Lineage | null>();
  #onLost: ((keys: KeysOn) => void) | undefined;

  /** A watched connection reconnected to a known server and it is not read yet. */
  get checking(): boolean {
    return this.#checking > 0;
  }

  /** The one listener (the leasing store): called with the keys whose data was lost. */
  onLost(listener: (keys: KeysOn) => void): void {
    this.#onLost = listener;
  }

  /** Checks the server behind `connection` (at `address`, host:port) at each of its 'ready'. */
  watch(connection: WatchedConnection, address: string, keys: KeysOn, nodeId?: NodeId): void {
    connection.on('ready', () => void this.#check(connection, address, keys, nodeId));
  }

  async #check(connection: WatchedConnection, address: string, keys: KeysOn, nodeId?: NodeId): Promise<void> {
    // Its names, the id first: what it had is looked up by the id, else by the address.
    let names = [address];
    if (nodeId) {
      // Not known yet whether this is a first connection: counted exactly until it is.
      this.#checking++;
      try {
        const id = await nodeId();
        if (id !== undefined) names = [`node ${id}`, address];
      } catch {
        this.#onLost?.(keys);
        return;
      } finally {
        this.#checking--;
      }
    }
    // A server seen for the first time held nothing of ours yet: nothing to wait for, or to lose.
    const known = names.some((n) => this.#lineages.has(n));
    if (known) this.#checking++;
    else for (const n of names) this.#lineages.set(n, null); // a reconnect before INFO answers is checked
    let now: Lineage | undefined;
    try {
      now = lineageOf(await connection.info('replication'));
    } catch {
      now = undefined;
    }
    const had = names.find((n) => this.#lineages.has(n));
    const before = had === undefined ? undefined : this.#lineages.get(had);
    for (const n of names) this.#lineages.set(n, now ?? null);
    if (!known) return;
    this.#checking--;
    if (!(before && now && continues(before, now))) this.#onLost?.(keys);
  }
}
