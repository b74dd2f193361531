import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { openDatabase } from '../../src/db/database.js';
import type { Gateway } from '../../src/runtime/gateway.js';
import { ensureWorkspace } from '../../src/services/accounts/workspaces.js';
import { DEFAULT_CONFIG } from './default-config.js';
import { startGateway } from './gateway.js';

/** Two users of the websites and reports APIs, ensured at start through BOOTSTRAP_API_KEYS. */
export const ALICE_KEY = 'tg_test_alice_0123456789abcdef';
export const BOB_KEY = 'tg_test_bob_0123456789abcdef';

export const newDataDir = (): string => mkdtempSync(join(tmpdir(), 'tollgate-data-'));

/** A fresh data directory whose database already holds these workspaces (as `tollgate tokens create` makes them). */
export function dataDirWithWorkspaces(...names: string[]): string {
  const dataDir = newDataDir();
  const db = openDatabase(dataDir);
  for (const name of names) ensureWorkspace(db, name);
  db.close();
  return dataDir;
}

/**
 * Lifts the shipped config's per-address storage budgets (widget-sessions-ip, widget-stored-ip), for
 * the tests of the spec's limiters that send everything from one address.
 */
export const NO_ADDRESS_BUDGETS = {
  WIDGET_SESSIONS_PER_IP_HOUR: '1000000',
  WIDGET_STORED_PER_IP_MINUTE: '1000000',
  WIDGET_STORED_PER_IP_HOUR: '1000000',
} as const;

/**
 * The environment that runs the shipped config with its embedded services (no *_UPSTREAM set),
 * on ephemeral ports, with its own data directory. Pass `REDIS_URL` to count in a test's Redis.
 */
export function embeddedEnv(dataDir: string, extra: Record<string, string> = {}): Record<string, string> {
  return {
    HOST: '127.0.0.1',
    PORT: '0',
    ADMIN_PORT: '0',
    DATA_DIR: dataDir,
    BOOTSTRAP_API_KEYS: `${ALICE_KEY},${BOB_KEY}`,
    // The report tests analyse pages served on loopback.
    ANALYZER_ALLOW_PRIVATE_NETWORKS: 'true',
    CONFIG_WATCH: 'false',
    LOG_LEVEL: 'silent',
    REDIS_COMMAND_TIMEOUT: '2s',
    ...extra,
  };
}

/** The shipped config's gateway, in this process, with the embedded services running behind it. */
export async function startEmbeddedGateway(
  dataDir = newDataDir(),
  extra: Record<string, string> = {},
): Promise<Gateway> {
  return startGateway(DEFAULT_CONFIG, embeddedEnv(dataDir, extra));
}

/**
 * The environment of `tollgate start` on the shipped config as a new user's first start: loopback,
 * ephemeral ports unless given, no bootstrapped keys or tokens, no config watch, info logs.
 */
export function firstStartEnv(dataDir: string, extra: Record<string, string> = {}): Record<string, string> {
  return {
    HOST: '127.0.0.1',
    PORT: '0',
    ADMIN_PORT: '0',
    DATA_DIR: dataDir,
    BOOTSTRAP_API_KEYS: '',
    BOOTSTRAP_WORKSPACE_TOKEN: '',
    CONFIG_WATCH: 'false',
    LOG_LEVEL: 'info',
    ...extra,
  };
}
