// The gateway's check of a presented workspace token (the format is src/credentials/workspace-token.ts):
// the token stores it verifies against (a static list, a cache over the services' database).
import { timingSafeEqual } from 'node:crypto';
import { LRUCache } from 'lru-cache';
import { bearerToken } from '../credentials/bearer.js';
import { sha256 } from '../credentials/digest.js';
import {
  parseWorkspaceToken,
  type TokenFacts,
  type WorkspaceTokenStore,
} from '../credentials/workspace-token.js';

export type TokenOutcome =
  { readonly ok: true; readonly id: string } | { readonly ok: false; readonly reason: 'missing' | 'invalid' };

/** Checks the workspace token of an Authorization header ("Bearer <id>|<secret>") against the store. */
export async function verifyWorkspaceToken(
  authorization: string | undefined,
  store: WorkspaceTokenStore,
): Promise<TokenOutcome> {
  const token = bearerToken(authorization);
  if (token === undefined) return { ok: false, reason: 'missing' };
  const parsed = parseWorkspaceToken(token);
  if (!parsed) return { ok: false, reason: 'invalid' };
  let valid = false;
  try {
    valid = await store.verify(parsed.id, parsed.secret);
  } catch {
    // A token store that cannot answer proves nothing: the token is not accepted.
  }
  return valid ? { ok: true, id: parsed.id } : { ok: false, reason: 'invalid' };
}

/** Tokens listed in the config as id + SHA-256 of the secret (the Laravel Sanctum convention). */
export class StaticTokenStore implements WorkspaceTokenStore {
  readonly #hashes: ReadonlyMap<string, Buffer>;
  readonly #facts: ReadonlyMap<string, TokenFacts>;

  constructor(tokens: readonly { id: string; sha256: string; plan?: string; workspace?: string }[]) {
    this.#hashes = new Map(tokens.map((t) => [t.id, Buffer.from(t.sha256.toLowerCase(), 'hex')]));
    this.#facts = new Map(tokens.map((t) => [t.id, { plan: t.plan, workspace: t.workspace }]));
  }

  async facts(id: string): Promise<TokenFacts | undefined> {
    return this.#facts.get(id);
  }

  async verify(id: string, secret: string): Promise<boolean> {
    const expected = this.#hashes.get(id);
    if (!expected) return false;
    return timingSafeEqual(expected, sha256(secret));
  }
}

/**
 * Remembers verified tokens for `ttlMs`, so the hot path rarely asks the database; a revocation
 * therefore takes effect within `ttlMs`. Failures are never cached: a token that fails is asked again.
 */
export class CachedTokenStore implements WorkspaceTokenStore {
  readonly #verified: LRUCache<string, true>;
  readonly #facts: LRUCache<string, TokenFacts>;

  constructor(
    private readonly inner: WorkspaceTokenStore,
    ttlMs: number,
    /** The clock the ttl runs on (milliseconds); a test injects its own. */
    clock?: { now(): number },
  ) {
    this.#verified = new LRUCache({
      max: 10_000,
      ttl: Math.max(1, ttlMs),
      ttlAutopurge: false,
      // An injected clock is read at every lookup, not through lru-cache's 1 ms cache of it.
      ...(clock && { perf: clock, ttlResolution: 0 }),
    });
    this.#facts = new LRUCache({ max: 10_000, ttl: Math.max(1, ttlMs), ttlAutopurge: false });
  }

  /** A token's facts, cached as verifications are (a plan change bites within the ttl). */
  async facts(id: string): Promise<TokenFacts | undefined> {
    if (!this.inner.facts) return undefined;
    const cached = this.#facts.get(id);
    if (cached) return cached;
    const found = (await this.inner.facts(id)) ?? {};
    this.#facts.set(id, found);
    return found;
  }

  async verify(id: string, secret: string): Promise<boolean> {
    const key = `${id}|${secret}`;
    if (this.#verified.get(key)) return true;
    const valid = await this.inner.verify(id, secret);
    if (valid) this.#verified.set(key, true);
    return valid;
  }
}
