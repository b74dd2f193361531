#!/usr/bin/env node
import { parseArgs } from 'node:util';
import { checkCertificates } from './cli/check-certificates.js';
import { warningsText } from './cli/check-warnings.js';
import { describeRuleTable } from './cli/describe.js';
import { start } from './cli/start.js';
import { UsageError } from './cli/usage-error.js';
import { ConfigError } from './config/errors.js';
import { DatabaseOpenError } from './db/open-error.js';
import { ListenError } from './runtime/listen.js';
import { StoreConfigError } from './store/redis-connection.js';
import { loadConfigFile } from './rules/load.js';

const USAGE = `usage:
  tollgate start   --config FILE
  tollgate check   --config FILE
  tollgate explain --config FILE [--peer IP] [--header 'Name: value' ...] METHOD URL
  tollgate replay  --config FILE [--baseline FILE] [--json] [--top N] LOG...
  tollgate serve   websites|reports|widget|bulksync --port N [--host H] [--config FILE]
  tollgate users   create --name NAME [--email ADDRESS] [--config FILE]
  tollgate users   list [--json] [--config FILE]
  tollgate users   rotate-key ID [--config FILE]
  tollgate tokens  create --workspace NAME [--user ID] [--config FILE]
  tollgate tokens  list [--json] [--config FILE]
  tollgate tokens  revoke ID [--config FILE]
  tollgate tokens  plan --workspace NAME [PLAN] [--config FILE]`;

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
      email: { type: 'string' },
      workspace: { type: 'string' },
      user: { type: 'string' },
      json: { type: 'boolean' },
      baseline: { type: 'string' },
      top: { type: 'string', default: '10' },
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
      await checkCertificates(values.config, table.config);
      console.log(`${values.config}: ok\n\n${describeRuleTable(table)}${warningsText(table)}`);
      return 0;
    }
    // The commands that need the services' code (SQLite, fastify) load it only when they run.
    case 'explain': {
      const [method, target] = rest;
      if (!method || !target) {
        console.error(USAGE);
        return 2;
      }
      const { explain } = await import('./cli/explain.js');
      return explain(values.config, method, target, values.header, values.peer);
    }
    case 'replay': {
      const { replay } = await import('./cli/replay.js');
      const options = { config: values.config, baseline: values.baseline, json: values.json === true };
      return replay({ ...options, top: Number(values.top) }, rest);
    }
    case 'serve':
      return (await import('./cli/services.js')).serve(values.config, rest[0], values.host, values.port);
    case 'users':
      return (await import('./cli/accounts.js')).users(values.config, rest, values);
    case 'tokens':
      return (await import('./cli/accounts.js')).tokens(values.config, rest, values);
    default:
      console.error(`unknown command "${command}"\n${USAGE}`);
      return 2;
  }
}

main(process.argv.slice(2)).then(
  (code) => process.exit(code),
  (err: unknown) => {
    if (err instanceof ConfigError) console.error(`invalid config:\n${err.message}`);
    // The message names the store (password redacted); the error's cause is never printed, as
    // ioredis puts the AUTH command, password included, on its errors.
    else if (
      err instanceof StoreConfigError ||
      err instanceof DatabaseOpenError ||
      err instanceof ListenError
    ) {
      console.error(`cannot start: ${err.message}`);
    } else if (err instanceof UsageError || (err as { code?: string }).code?.startsWith('ERR_PARSE_ARGS')) {
      console.error(`${(err as Error).message}\n${USAGE}`);
      process.exit(2);
    } else console.error(err);
    process.exit(1);
  },
);
