import { loadConfigFile } from '../rules/load.js';
import { openDatabase, type Db } from '../db/database.js';
import {
  createUser,
  findUser,
  firstUserId,
  hasAnyKey,
  isEmailAddress,
  listUsers,
  rotateUserKey,
  userExists,
} from '../services/accounts/accounts.js';
import {
  createWorkspaceToken,
  listWorkspaceTokens,
  revokeWorkspaceToken,
  WorkspaceOwnerError,
  workspaceOwner,
  setWorkspacePlan,
} from '../services/accounts/workspaces.js';
import { formatTable } from './table.js';
import { UsageError } from './usage-error.js';

/** `tollgate users …` and `tollgate tokens …`: the accounts in the config's services.dataDir. */

/** A command that cannot do what it was asked: its message is printed alone, and it exits with `code`. */
class CommandError extends Error {
  constructor(
    message: string,
    readonly code: number,
  ) {
    super(message);
  }
}

export const USERS_USAGE =
  'usage: tollgate users create --name NAME [--email ADDRESS] | tollgate users list [--json] | tollgate users rotate-key ID';
export const TOKENS_USAGE =
  'usage: tollgate tokens create --workspace NAME [--user ID] | tollgate tokens list [--json] | tollgate tokens revoke ID' +
  ' | tollgate tokens plan --workspace NAME [PLAN]';

export interface AccountOptions {
  readonly name?: string;
  readonly email?: string;
  readonly workspace?: string;
  readonly user?: string;
  readonly json?: boolean;
}

/** A user id given on the command line (--user, or rotate-key's argument). */
function userId(value: string | undefined, what: string): number | undefined {
  if (value === undefined) return undefined;
  if (!/^[1-9]\d{0,14}$/.test(value)) throw new UsageError(`${what} must be a user id, got "${value}"`);
  return Number(value);
}

/**
 * `users create --name NAME [--email ADDRESS]` prints the new user's API key, once (the address
 * receives the user's websites' reports); `users list` the users, never a key; `users rotate-key ID`
 * replaces the user's key (the old one stops at once) and prints the new one, once.
 */
export async function users(configFile: string, args: string[], options: AccountOptions): Promise<number> {
  const [action, id] = args;
  if (action === 'create' && options.name && args.length === 1) {
    const { name, email } = options;
    if (email !== undefined && !isEmailAddress(email)) {
      throw new UsageError(`--email must be an e-mail address, got "${email}"`);
    }
    return withDatabase(configFile, (db) => {
      const { userId: created, key } = createUser(db, name, undefined, email);
      console.log(`created user ${created} "${name}"; its API key (shown once):\n${key}`);
    });
  }
  if (action === 'list' && args.length === 1) {
    return withDatabase(configFile, (db) => {
      const rows = listUsers(db);
      if (options.json) return void console.log(JSON.stringify(rows, null, 2));
      console.log(
        formatTable(
          ['ID', 'NAME', 'EMAIL', 'CREATED', 'LAST USED'],
          rows.map((u) => [u.id, u.name, u.email, u.created_at, u.last_used_at ?? 'never']),
        ),
      );
    });
  }
  if (action === 'rotate-key' && id !== undefined && args.length === 2) {
    const user = userId(id, 'rotate-key');
    return withDatabase(configFile, (db, bootstrapKeys) => {
      const found = findUser(db, user!);
      if (!found)
        throw new CommandError(`no user with id ${user} (\`tollgate users list\` shows the ids)`, 1);
      // A bootstrap key comes back at the next start (as a new user): it is changed in the config.
      if (hasAnyKey(db, found.id, bootstrapKeys)) {
        throw new CommandError(
          `user ${found.id}'s key is one of services.bootstrapApiKeys (BOOTSTRAP_API_KEYS): change it there`,
          1,
        );
      }
      const key = rotateUserKey(db, found.id)!;
      console.log(
        `new API key of user ${found.id} "${found.name}" (shown once; the previous key no longer works):\n${key}`,
      );
    });
  }
  throw new UsageError(USERS_USAGE);
}

/**
 * The owner of the workspace a token is created for: the one named by --user (which must exist, and
 * must be the owner of an existing workspace), else the workspace's owner, else the first user.
 */
function tokenOwner(db: Db, workspace: string, requested: number | undefined): number {
  const current = workspaceOwner(db, workspace);
  if (requested !== undefined) {
    if (!userExists(db, requested)) {
      throw new CommandError(`no user with id ${requested} (\`tollgate users list\` shows the ids)`, 2);
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

/** `tokens create --workspace NAME [--user ID]`, `tokens list`, `tokens revoke ID`. */
export async function tokens(configFile: string, args: string[], options: AccountOptions): Promise<number> {
  const [action, id] = args;
  const { workspace } = options;
  if (action === 'create' && workspace && args.length === 1) {
    const requested = userId(options.user, '--user');
    return withDatabase(configFile, (db) => {
      // One transaction: the owner read is the owner the token's workspace gets.
      const created = db
        .transaction(() => createWorkspaceToken(db, workspace, tokenOwner(db, workspace, requested)))
        .immediate();
      // Unchanged since before workspaces had owners: scripts read this output.
      console.log(`created token ${created.id} for workspace "${workspace}" (shown once):\n${created.token}`);
    });
  }
  if (action === 'list' && args.length === 1) {
    return withDatabase(configFile, (db) => {
      const rows = listWorkspaceTokens(db);
      if (options.json) return void console.log(JSON.stringify(rows, null, 2));
      console.log(
        formatTable(
          ['ID', 'WORKSPACE', 'USER', 'CREATED', 'LAST USED', 'REVOKED'],
          rows.map((t) => [
            t.id,
            t.workspace,
            t.user_id,
            t.created_at,
            t.last_used_at ?? 'never',
            t.revoked_at,
          ]),
        ),
      );
    });
  }
  if (action === 'plan' && workspace && args.length <= 2) {
    // The workspace's plan: its tokens' tier under tiers.workspaceTokenPlan (no PLAN: cleared).
    return withDatabase(configFile, (db) => {
      if (!setWorkspacePlan(db, workspace, id)) throw new CommandError(`no workspace "${workspace}"`, 1);
      console.log(
        id ? `workspace "${workspace}" is on plan "${id}"` : `workspace "${workspace}" has no plan`,
      );
    });
  }
  if (action === 'revoke' && id && args.length === 2) {
    return withDatabase(configFile, (db) => {
      if (!revokeWorkspaceToken(db, id)) throw new CommandError(`no live token with id "${id}"`, 1);
      console.log(`revoked token ${id}`);
    });
  }
  throw new UsageError(TOKENS_USAGE);
}

/** Runs `work` on the config's database; a CommandError prints its message alone and exits with its code. */
async function withDatabase(
  configFile: string,
  work: (db: Db, bootstrapKeys: readonly string[]) => number | void,
): Promise<number> {
  const { config } = await loadConfigFile(configFile);
  const db = openDatabase(config.services.dataDir);
  try {
    return work(db, config.services.bootstrapApiKeys) ?? 0;
  } catch (err) {
    if (!(err instanceof CommandError)) throw err;
    console.error(err.message);
    return err.code;
  } finally {
    db.close();
  }
}
