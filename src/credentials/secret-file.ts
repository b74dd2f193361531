import { randomBytes } from 'node:crypto';
import { link, mkdir, readFile, unlink, writeFile } from 'node:fs/promises';
import { dirname } from 'node:path';

/**
 * Reads the HS256 secret file, creating it with a random secret when absent, so restarts keep
 * tokens valid. Several processes may start at once: the secret is written to a private temp file
 * and linked into place (atomic, and refused if another process linked first), so no reader ever
 * sees a half-written file.
 */
export async function readOrCreateSecret(file: string): Promise<string> {
  if (!file) throw new Error('identity.jwt needs one of secret, secretFile, publicKeys or jwksFile');
  const existing = await readSecret(file);
  if (existing !== undefined) return existing;
  await mkdir(dirname(file), { recursive: true });
  const temp = `${file}.${process.pid}.${randomBytes(4).toString('hex')}.tmp`;
  await writeFile(temp, `${randomBytes(32).toString('base64url')}\n`, { mode: 0o600, flag: 'wx' });
  try {
    await link(temp, file);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
    // Another process linked its secret first: use theirs.
  } finally {
    await unlink(temp);
  }
  const secret = await readSecret(file);
  if (secret === undefined) throw new Error(`the JWT secret file ${file} is empty`);
  return secret;
}

/** The file's secret, or undefined when the file does not exist; an empty file is an error. */
async function readSecret(file: string): Promise<string | undefined> {
  let text: string;
  try {
    text = await readFile(file, 'utf8');
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw err;
  }
  const secret = text.trim();
  if (!secret) throw new Error(`the JWT secret file ${file} is empty: delete it to have a new secret made`);
  return secret;
}
