import { expect } from 'vitest';
import { ConfigError } from '../../src/config/errors.js';
import { loadConfigText } from '../../src/rules/load.js';

/** The message of the ConfigError that loading `yaml` (as conf.yaml) must throw. */
export function configErrorOf(yaml: string, env: NodeJS.ProcessEnv = {}): string {
  try {
    loadConfigText(yaml, 'conf.yaml', env);
  } catch (err) {
    expect(err).toBeInstanceOf(ConfigError);
    return (err as Error).message;
  }
  throw new Error('expected a ConfigError');
}
