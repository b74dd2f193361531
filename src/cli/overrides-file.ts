import { readFile } from 'node:fs/promises';
import type { OverrideAction } from '../limits/overrides.js';
import { parseOverridesFile } from '../runtime/overrides.js';
import { UsageError } from './usage-error.js';

/** The entries of an overrides file (tiers.overrides.file), as `explain` and `replay` read it; a bad entry is a usage error. */
export async function readOverridesFile(file: string): Promise<Map<string, OverrideAction>> {
  const { entries, errors } = parseOverridesFile(await readFile(file, 'utf8'));
  if (errors.length > 0) throw new UsageError(`${file}: ${errors.join('; ')}`);
  return entries;
}
