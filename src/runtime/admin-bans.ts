import type { IncomingMessage, ServerResponse } from 'node:http';
import { sendError, sendJson } from '../http/responses.js';
import { banKeys, parseBanKey } from '../limits/keys.js';
import type { RuleTable } from '../rules/compile.js';
import type { WindowStore } from '../store/window-store.js';
import type { AdminRoute } from './admin-api.js';

export interface AdminBansOptions {
  readonly store: Pick<WindowStore, 'listBans' | 'liftBan'>;
  /** The rule table and key prefix in force (a reload swaps them). */
  readonly current: () => { readonly table: RuleTable; readonly keyPrefix: string };
}

/** Bans listed per call unless ?limit= says otherwise, and the most it may say. */
const DEFAULT_LIMIT = 100;
const MAX_LIMIT = 1000;

/**
 * The admin API of the penalty boxes (config `ban`): GET /v1/bans lists the bans in force (open to
 * reads), DELETE /v1/bans/<limiter>/<key> lifts one (admin token), <key> being the value of the
 * limiter's hash-tag part as listed (or as `tollgate explain` shows it).
 */
export function adminBanRoutes(options: AdminBansOptions): AdminRoute[] {
  return [
    { method: 'GET', path: '/v1/bans', handle: (req, res) => list(options, req, res) },
    { method: 'DELETE', path: '/v1/bans/', handle: (_req, res, rest) => lift(options, res, rest) },
  ];
}

async function list(options: AdminBansOptions, req: IncomingMessage, res: ServerResponse): Promise<void> {
  const query = new URL(req.url ?? '/', 'http://admin').searchParams;
  const limitText = query.get('limit');
  const limit = limitText === null ? DEFAULT_LIMIT : Number(limitText);
  if (!Number.isInteger(limit) || limit < 1 || limit > MAX_LIMIT) {
    return sendError(res, 400, 'invalid_limit', `limit must be a whole number from 1 to ${MAX_LIMIT}.`);
  }
  const limiter = query.get('limiter');
  const { keyPrefix } = options.current();
  const found = await bansOf(options, keyPrefix, limit, limiter);
  const now = Date.now();
  const bans = found.bans.map((b) => ({
    limiter: b.limiter,
    key: b.tag,
    until: new Date(b.untilMs).toISOString(),
    retryAfter: Math.max(1, Math.ceil((b.untilMs - now) / 1000)),
  }));
  sendJson(res, 200, JSON.stringify({ bans, truncated: found.truncated }));
}

async function bansOf(options: AdminBansOptions, prefix: string, limit: number, limiter: string | null) {
  const listed = (await options.store.listBans?.(prefix, limit)) ?? { bans: [], truncated: false };
  const bans = listed.bans.flatMap((b) => {
    const parsed = parseBanKey(prefix, b.key);
    if (!parsed || (limiter !== null && parsed.limiter !== limiter)) return [];
    return [{ ...parsed, untilMs: b.untilMs }];
  });
  return { bans, truncated: listed.truncated };
}

async function lift(options: AdminBansOptions, res: ServerResponse, rest: string): Promise<void> {
  const slash = rest.lastIndexOf('/');
  const limiter = slash > 0 ? safeDecode(rest.slice(0, slash)) : undefined;
  const key = slash > 0 ? safeDecode(rest.slice(slash + 1)) : undefined;
  if (!limiter || !key) {
    return sendError(res, 400, 'invalid_ban', 'Name the ban as /v1/bans/<limiter>/<key>.');
  }
  const { table, keyPrefix } = options.current();
  if (!table.limiters.get(limiter)?.ban) {
    return sendError(res, 404, 'unknown_limiter', `No limiter "${limiter}" with a ban.`);
  }
  const keys = banKeys(keyPrefix, limiter, key);
  const lifted = (await options.store.liftBan?.(keys.key, keys.strikesKey)) ?? false;
  if (!lifted) return sendError(res, 404, 'ban_not_found', `No ban of "${key}" by limiter "${limiter}".`);
  sendJson(res, 200, JSON.stringify({ lifted: { limiter, key } }));
}

const safeDecode = (s: string): string | undefined => {
  try {
    return decodeURIComponent(s);
  } catch {
    return undefined;
  }
};
