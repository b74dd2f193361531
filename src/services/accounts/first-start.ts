import type { Logger } from 'pino';
import type { Db } from '../../db/database.js';
import { bootstrapUsers } from './accounts.js';
import type { ServicesConfig } from '../config.js';
import { adoptOrphanWorkspaces, ensureWorkspace, ensureWorkspaceToken } from './workspaces.js';

/** The workspace a first start creates, so the quick start's widget request works with no CLI step. */
export const DEMO_WORKSPACE = 'demo';

/**
 * Applies the config's bootstrap accounts (API keys, workspace token). A first start (no users and
 * no bootstrap keys) also creates user "admin" and workspace "demo", owned by it, in one
 * transaction, and logs them once: the next start finds the user and creates nothing.
 */
export function bootstrapAccounts(db: Db, services: ServicesConfig, logger: Logger): void {
  const apply = db.transaction(() => {
    // Users first: the bootstrap workspace, and any workspace still without an owner, go to the first one.
    const admin = bootstrapUsers(db, services.bootstrapApiKeys);
    const adopted = adoptOrphanWorkspaces(db);
    const { bootstrapToken, bootstrapWorkspace } = services.bulksync;
    if (bootstrapToken) ensureWorkspaceToken(db, bootstrapToken, bootstrapWorkspace);
    const demo = admin && ensureWorkspace(db, DEMO_WORKSPACE, admin.userId);
    return { admin, demo, adopted };
  });
  const { admin, demo, adopted } = apply.immediate();
  if (adopted > 0)
    logger.info({ workspaces: adopted }, 'workspaces without an owner now belong to the first user');
  if (admin) {
    logger.warn(
      { user: admin.userId, apiKey: admin.key },
      'first start: created user "admin"; keep this API key, it is not shown again',
    );
  }
  if (demo) {
    logger.warn(
      { workspace: demo.name },
      `first start: created workspace "${demo.name}"; try POST /api/v1/widget/init with {"workspace":"${demo.name}"}`,
    );
  }
}
