import { SERVICE_NAMES, type ServiceName } from '../service-names.js';
import { loadConfigFile } from '../rules/load.js';
import { openDatabase, type Db } from '../db/database.js';
import { createLogger } from '../logger.js';
import { createUser, isEmailAddress } from '../services/accounts/accounts.js';
import { openServiceDatabase, startService } from '../services/registry.js';
import {
  createWorkspaceToken,
  firstUserId,
  revokeWorkspaceToken,
  userExists,
  WorkspaceOwnerError,
  workspaceOwner,
} from '../services/accounts/workspaces.js';
import { servicesConfigFrom } from './services-config.js';
import { stopSignal } from './signals.js';
import { UsageError } from './usage-error.js';

/** A command that cannot do what it was asked: its message is printed alone, and it exits with `code`. */
class CommandError extends Error {
  constructor(
    message: string,
    readonly code: number,
  ) {
    super(message);
  }
}

const TOKENS_USAGE = 'usage: tollgate tokens create --workspace NAME [--user ID] | tollgate tokens revoke ID';

/** `tollgate serve NAME --port N`: one embedded service alone, for a gateway elsewhere to front. */
export async function serve(
  configFile: string,
  name: string | undefined,
  host: string,
  port: string,
): Promise<number> {
  if (!SERVICE_NAMES.includes(name as ServiceName)) {
    throw new UsageError(`serve needs one of ${SERVICE_NAMES.join(', ')}`);
  }
  const portNumber = Number(port);
  if (!Number.isInteger(portNumber) || portNumber < 0 || portNumber > 65535)
    throw new UsageError(`--port must be a port number, got "${port}"`);
  const { config } = await loadConfigFile(configFile);
  const logger = createLogger(config.log.level);
  const services = servicesConfigFrom(config);
  const db = openServiceDatabase(services, logger);
  const service = await startService(name as ServiceName, { db, config: services, logger }, host, portNumber);
  logger.info({ embedded: name, url: service.url }, 'listening');
  await stopSignal(logger);
  await service.close();
  db.close();
  return 0;
}

const USERS_USAGE = 'usage: tollgate users create --name NAME [--email ADDRESS]';

/**
 * `tollgate users create --name NAME [--email ADDRESS]`: prints the new user's API key, once. The
 * e-mail address receives the user's websites' reports.
 */
export async function users(
  configFile: string,
  args: string[],
  name: string | undefined,
  email?: string,
): Promise<number> {
  if (args[0] !== 'create' || !name) throw new UsageError(USERS_USAGE);
  if (email !== undefined && !isEmailAddress(email)) {
    throw new UsageError(`--email must be an e-mail address, got "${email}"`);
  }
  return withDatabase(configFile, (db) => {
    const { userId, key } = createUser(db, name, undefined, email);
    console.log(`created user ${userId} "${name}"; its API key (shown once):\n${key}`);
  });
}

/**
 * The owner of the workspace a token is created for: the one named by --user (which must exist, and
 * must be the owner of an existing workspace), else the workspace's owner, else the first user.
 */
function tokenOwner(db: Db, workspace: string, requested: number | undefined): number {
  const current = workspaceOwner(db, workspace);
  if (requested !== undefined) {
    if (!userExists(db, requested)) {
      throw new CommandError(`no user with id ${requested} (\`tollgate users create\` prints the ids)`, 2);
    }
    if (current != null && current !== requested) {
      throw new CommandError(new WorkspaceOwnerError(workspace, current, requested).message, 2);
    }
    return requested;
  }
  const owner = current ?? firstUserId(db);
  if (owner === undefined) {
    throw new CommandError(
      'there are no users yet: a workspace belongs to one; create it first with ' +
        '`tollgate users create --name NAME` (or start the gateway once)',
      1,
    );
  }
  return owner;
}

/** A --user value: a user id. */
function userId(value: string | undefined): number | undefined {
  if (value === undefined) return undefined;
  if (!/^[1-9]\d{0,14}$/.test(value)) throw new UsageError(`--user must be a user id, got "${value}"`);
  return Number(value);
}

/** `tollgate tokens create --workspace NAME [--user ID]` / `tollgate tokens revoke ID`. */
export async function tokens(
  configFile: string,
  args: string[],
  workspace: string | undefined,
  user?: string,
): Promise<number> {
  const [action, id] = args;
  if (action === 'create' && workspace) {
    const requested = userId(user);
    return withDatabase(configFile, (db) => {
      try {
        // One transaction: the owner read is the owner the token's workspace gets.
        const created = db
          .transaction(() => {
            return createWorkspaceToken(db, workspace, tokenOwner(db, workspace, requested));
          })
          .immediate();
        // Unchanged since before workspaces had owners: scripts read this output.
        console.log(
          `created token ${created.id} for workspace "${workspace}" (shown once):\n${created.token}`,
        );
        return 0;
      } catch (err) {
        if (!(err instanceof CommandError)) throw err;
        console.error(err.message);
        return err.code;
      }
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
  throw new UsageError(TOKENS_USAGE);
}

async function withDatabase(configFile: string, work: (db: Db) => number | void): Promise<number> {
  const { config } = await loadConfigFile(configFile);
  const db = openDatabase(config.services.dataDir);
  try {
    return work(db) ?? 0;
  } finally {
    db.close();
  }
}
