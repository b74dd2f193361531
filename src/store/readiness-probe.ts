import { batchScriptArgs, parseBatchReply, type BatchedRequest } from './batch-window-script.js';
import { READY, type Readiness, type WindowRequest } from './window-store.js';

/**
 * The key the readiness probe counts on: under the key prefix, so an ACL key pattern that admits
 * the real keys (`~tg:*`) admits it too, and never a real key, whose prefix is followed by a hash
 * tag (`tg:{…}`). Without a tag of its own it lands in whichever Cluster slot its name hashes to.
 */
export const probeKey = (keyPrefix: string): string => `${keyPrefix}readiness-probe`;

const probeWindow = (key: string, cost: number): WindowRequest => ({
  key,
  limit: 0,
  periodMs: 60_000,
  enforce: true,
  cacheWhenSpent: false,
  cost,
});

/**
 * A batch that makes the script run every command it can run, on every probe: a cost of 0 finds
 * room in a limit of 0 (GET, INCRBY by 0, and PEXPIRE, since the count stays 0 and so always
 * equals the cost), then a cost of 1 is refused by it (GET, PTTL). Redis 7 checks a script's
 * commands against the user's ACL as they run, so a user without one of them fails here. The
 * key's count stays 0 and it expires a minute after the last probe.
 */
export const probeBatch = (key: string): BatchedRequest[] => [[probeWindow(key, 0)], [probeWindow(key, 1)]];

/**
 * Runs the batch script once on the probe batch through `run` (EVALSHA, or EVAL when the script is
 * not loaded): ready when it answers as the script does, else not, with Redis's words (NOPERM,
 * READONLY on a replica, NOSCRIPT…) or the timeout.
 */
export async function probeScript(
  run: (args: [number, ...(string | number)[]]) => Promise<unknown>,
  key: string,
  timeoutMs: number,
): Promise<Readiness> {
  const batch = probeBatch(key);
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`no reply within ${timeoutMs}ms`)), timeoutMs);
  });
  try {
    const reply = await Promise.race([run(batchScriptArgs(batch)), timeout]);
    if (!Array.isArray(reply)) throw new Error(`the script replied ${typeof reply}, not a list`);
    parseBatchReply(batch, reply, Date.now());
    return READY;
  } catch (err) {
    return { ready: false, reason: (err as Error).message };
  } finally {
    clearTimeout(timer);
  }
}
