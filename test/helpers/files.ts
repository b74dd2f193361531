import { rename, writeFile } from 'node:fs/promises';
import { basename, dirname, join } from 'node:path';

/** Replaces a file the way editors and config-map mounts do: write a sibling, then rename it over. */
export async function replaceFile(file: string, text: string): Promise<void> {
  const temp = join(dirname(file), `.${basename(file)}.tmp`);
  await writeFile(temp, text);
  await rename(temp, file);
}
