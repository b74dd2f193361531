import { rmSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import type { Logger } from 'pino';
import type { Db } from '../../db/database.js';
import { bootstrapUsers } from './accounts.js';
import type { ServicesConfig } from '../config.js';
import { adoptOrphanWorkspaces, ensureWorkspace, ensureWorkspaceToken } from './workspaces.js';

/** The file a first start writes the admin's API key to (mode 0600): a log aggregator never sees the key. */
export const FIRST_START_FILE = 'first-start.txt';

/**
 * Writes the key alone (and a newline) to a new file only its owner may read: a stale file of an
 * earlier database is replaced, never reused with wider permissions.
 */
function writeKeyFile(path: string, key: string): void {
  rmSync(path, { force: true });
  writeFileSync(path, `${key}\n`, { mode: 0o600, flag: 'wx' });
}

/** The workspace a first start creates, so the quick start's widget request works with no CLI step. */
export const DEMO_WORKSPACE = 'demo';

/**
 * Applies the config's bootstrap accounts (API keys, workspace token). A first start (no users and
 * no bootstrap keys) also creates user "admin" and workspace "demo", owned by it, in one
 * transaction, writes the admin's API key to DATA_DIR/first-start.txt (inside the transaction: if
 * the file cannot be written, nothing is created) and logs the file's path, never the key. The
 * next start finds the user and creates nothing.
 */
export function bootstrapAccounts(db: Db, services: ServicesConfig, logger: Logger): void {
  const keyFile = resolve(join(services.dataDir, FIRST_START_FILE));
  const apply = db.transaction(() => {
    // Users first: the bootstrap workspace, and any workspace still without an owner, go to the first one.
    const admin = bootstrapUsers(db, services.bootstrapApiKeys);
    const adopted = adoptOrphanWorkspaces(db);
    const { bootstrapToken, bootstrapWorkspace } = services.bulksync;
    if (bootstrapToken) ensureWorkspaceToken(db, bootstrapToken, bootstrapWorkspace);
    const demo = admin && ensureWorkspace(db, DEMO_WORKSPACE, admin.userId);
    if (admin) writeKeyFile(keyFile, admin.key);
    return { admin, demo, adopted };
  });
  const { admin, demo, adopted } = apply.immediate();
  if (adopted > 0)
    logger.info({ workspaces: adopted }, 'workspaces without an owner now belong to the first user');
  if (admin) {
    logger.warn(
      { user: admin.userId, keyFile },
      `first start: created user "admin"; its API key is in ${keyFile} (readable by this account only): ` +
        'keep it and delete the file',
    );
  }
  if (demo) {
    logger.warn(
      { workspace: demo.name },
      `first start: created workspace "${demo.name}"; try POST /api/v1/widget/init with {"workspace":"${demo.name}"}`,
    );
  }
}
