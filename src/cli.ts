#!/usr/bin/env node
import { parseArgs } from 'node:util';
import { describeRequest, describeRuleTable } from './cli/describe.js';
import { serve, tokens, UsageError, users } from './cli/services.js';
import { start } from './cli/start.js';
import { ConfigError } from './config/errors.js';
import { loadConfigFile } from './config/load.js';
import { buildState, closeState } from './http/state.js';
import { describePeer } from './identity/peer.js';
import { resolveIdentity } from './identity/resolve.js';
import { canonicalTarget } from './routing/request-target.js';
import { openDatabase } from './db/database.js';
import { DatabaseTokenStore } from './services/workspaces.js';

const USAGE = `usage:
  tollgate start   --config FILE
  tollgate check   --config FILE
  tollgate explain --config FILE [--peer IP] [--header 'Name: value' ...] METHOD URL
  tollgate serve   websites|reports|widget|bulksync --port N [--host H] [--config FILE]
  tollgate users   create --name NAME [--config FILE]
  tollgate tokens  create --workspace NAME [--user ID] [--config FILE]
  tollgate tokens  revoke ID [--config FILE]`;

async function main(argv: string[]): Promise<number> {
  const { values, positionals } = parseArgs({
    args: argv,
    allowPositionals: true,
    options: {
      config: { type: 'string', short: 'c', default: 'config/gateway.yaml' },
      header: { type: 'string', short: 'H', multiple: true, default: [] },
      peer: { type: 'string', default: '127.0.0.1' },
      host: { type: 'string', default: '127.0.0.1' },
      port: { type: 'string', default: '0' },
      name: { type: 'string' },
      workspace: { type: 'string' },
      user: { type: 'string' },
      help: { type: 'boolean', short: 'h' },
    },
  });
  const [command, ...rest] = positionals;
  if (values.help || !command) {
    console.log(USAGE);
    return command || values.help ? 0 : 2;
  }
  switch (command) {
    case 'start':
      return start(values.config);
    case 'check': {
      const table = await loadConfigFile(values.config);
      console.log(`${values.config}: ok\n\n${describeRuleTable(table)}`);
      return 0;
    }
    case 'explain':
      return explain(values.config, rest, values.header, values.peer);
    case 'serve':
      return serve(values.config, rest[0], values.host, values.port);
    case 'users':
      return users(values.config, rest, values.name);
    case 'tokens':
      return tokens(values.config, rest, values.workspace, values.user);
    default:
      console.error(`unknown command "${command}"\n${USAGE}`);
      return 2;
  }
}

async function explain(
  configFile: string,
  args: string[],
  headerArgs: string[],
  peer: string,
): Promise<number> {
  const [method, target] = args;
  if (!method || !target) {
    console.error(USAGE);
    return 2;
  }
  const headers: Record<string, string> = {};
  for (const h of headerArgs) {
    const colon = h.indexOf(':');
    if (colon <= 0) throw new UsageError(`--header must be "Name: value", got "${h}"`);
    headers[h.slice(0, colon).trim().toLowerCase()] = h.slice(colon + 1).trim();
  }
  let path = target;
  const absolute = /^https?:\/\/([^/?#]*)(.*)$/.exec(target);
  if (absolute) {
    // Taken apart by hand: URL parsing would normalise the path the gateway must judge as sent.
    headers['host'] ??= absolute[1]!;
    path = absolute[2] || '/';
  }
  const canonical = canonicalTarget(path);
  const table = await loadConfigFile(configFile);
  // Explain reads the token database but never starts services or bootstraps accounts.
  const db =
    table.config.identity.workspaceTokens.source === 'database'
      ? openDatabase(table.config.services.dataDir)
      : undefined;
  const state = await buildState(table, { workspaceTokens: db && new DatabaseTokenStore(db) });
  try {
    const route = table.router.matchPath(headers['host'], method.toUpperCase(), canonical.matchPath);
    const identity = route?.limiters.length
      ? await resolveIdentity(state.identity, route.parts, describePeer(peer, state.identity), headers)
      : undefined;
    console.log(describeRequest(table, route?.name, identity, state.keyPrefix, canonical));
  } finally {
    await closeState(state);
    db?.close();
  }
  return 0;
}

main(process.argv.slice(2)).then(
  (code) => process.exit(code),
  (err: unknown) => {
    if (err instanceof ConfigError) console.error(`invalid config:\n${err.message}`);
    else if (err instanceof UsageError || (err as { code?: string }).code?.startsWith('ERR_PARSE_ARGS')) {
      console.error(`${(err as Error).message}\n${USAGE}`);
      process.exit(2);
    } else console.error(err);
    process.exit(1);
  },
);
