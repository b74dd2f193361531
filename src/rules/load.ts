/** A config file to its rule table: parsed and validated by src/config/, compiled by compile.ts. */
import { ConfigError } from '../config/errors.js';
import { parseConfigText, readConfigFile } from '../config/load.js';
import { compileConfig, type RuleTable } from './compile.js';

/** Reads, interpolates, validates and compiles a config file. Throws ConfigError naming file:line:col and field. */
export async function loadConfigFile(file: string, env: NodeJS.ProcessEnv = process.env): Promise<RuleTable> {
  return loadConfigText(await readConfigFile(file), file, env);
}

export function loadConfigText(text: string, file: string, env: NodeJS.ProcessEnv = process.env): RuleTable {
  const { config, locate } = parseConfigText(text, file, env);
  const compiled = compileConfig(config);
  if ('issues' in compiled) throw new ConfigError(file, compiled.issues.map(locate));
  return compiled.table;
}
