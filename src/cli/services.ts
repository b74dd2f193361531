import { embeddedServices, type EmbeddedServiceName } from '../config/schema.js';
import { loadConfigFile } from '../config/load.js';
import { openDatabase } from '../db/database.js';
import { createLogger } from '../logger.js';
import { createUser } from '../services/accounts.js';
import { openServiceDatabase, startService } from '../services/registry.js';
import { createWorkspaceToken, revokeWorkspaceToken } from '../services/workspaces.js';
import { stopSignal } from './signals.js';

export class UsageError extends Error {}

/** `tollgate serve NAME --port N`: one embedded service alone, for a gateway elsewhere to front. */
export async function serve(
  configFile: string,
  name: string | undefined,
  host: string,
  port: string,
): Promise<number> {
  if (!embeddedServices.includes(name as EmbeddedServiceName)) {
    throw new UsageError(`serve needs one of ${embeddedServices.join(', ')}`);
  }
  const portNumber = Number(port);
  if (!Number.isInteger(portNumber) || portNumber < 0 || portNumber > 65535)
    throw new UsageError(`--port must be a port number, got "${port}"`);
  const { config } = await loadConfigFile(configFile);
  const logger = createLogger(config.log.level);
  const db = openServiceDatabase(config, logger);
  const service = await startService(name as EmbeddedServiceName, { db, config, logger }, host, portNumber);
  logger.info({ embedded: name, url: service.url }, 'listening');
  await stopSignal(logger);
  await service.close();
  db.close();
  return 0;
}

/** `tollgate users create --name NAME`: prints the new user's API key, once. */
export async function users(configFile: string, args: string[], name: string | undefined): Promise<number> {
  if (args[0] !== 'create' || !name) throw new UsageError('usage: tollgate users create --name NAME');
  return withDatabase(configFile, (db) => {
    const { userId, key } = createUser(db, name);
    console.log(`created user ${userId} "${name}"; its API key (shown once):\n${key}`);
  });
}

/** `tollgate tokens create --workspace NAME` / `tollgate tokens revoke ID`. */
export async function tokens(
  configFile: string,
  args: string[],
  workspace: string | undefined,
): Promise<number> {
  const [action, id] = args;
  if (action === 'create' && workspace) {
    return withDatabase(configFile, (db) => {
      const created = createWorkspaceToken(db, workspace);
      console.log(`created token ${created.id} for workspace "${workspace}" (shown once):\n${created.token}`);
    });
  }
  if (action === 'revoke' && id) {
    let revoked = false;
    const code = await withDatabase(configFile, (db) => void (revoked = revokeWorkspaceToken(db, id)));
    if (!revoked) {
      console.error(`no live token with id "${id}"`);
      return 1;
    }
    console.log(`revoked token ${id}`);
    return code;
  }
  throw new UsageError('usage: tollgate tokens create --workspace NAME | tollgate tokens revoke ID');
}

async function withDatabase(
  configFile: string,
  work: (db: ReturnType<typeof openDatabase>) => void,
): Promise<number> {
  const { config } = await loadConfigFile(configFile);
  const db = openDatabase(config.services.dataDir);
  try {
    work(db);
  } finally {
    db.close();
  }
  return 0;
}
