/**
 * The admin API of overrides: GET /v1/overrides lists those in force (the file's and the API's),
 * PUT /v1/overrides/<kind>:<value> sets one (body: a tier name, "unlimited", { tier },
 * { unlimited: true } or { limit, burst? }), DELETE removes one the API set. Set in the store, so
 * every instance applies it within its poll interval (tiers.overrides.pollInterval).
 */
import type { ServerResponse } from 'node:http';
import { sendError, sendJson } from '../http/responses.js';
import { parseOverrideAction, parseOverrideKey, type OverrideAction } from '../limits/overrides.js';
import { readAdminJson, type AdminRoute } from './admin-api.js';
import type { LiveOverrides } from './overrides.js';

const PATH = '/v1/overrides';

const entry = (key: string, source: 'file' | 'api', action: OverrideAction) => ({ key, source, ...action });

/** The key of a path's rest ("ip:10.0.0.0%2F8"), in canonical form; answers 400 itself otherwise. */
function keyOf(rest: string, res: ServerResponse): string | undefined {
  let key: string;
  try {
    key = decodeURIComponent(rest);
  } catch {
    key = rest;
  }
  const parsed = parseOverrideKey(key);
  if (typeof parsed === 'string') {
    sendError(res, 400, 'invalid_override', parsed);
    return undefined;
  }
  return parsed.key;
}

function storeFailed(res: ServerResponse, err: unknown): void {
  sendError(res, 503, 'store_unavailable', `The store did not take the change: ${(err as Error).message}`);
}

export function overrideRoutes(overrides: LiveOverrides): AdminRoute[] {
  return [
    {
      method: 'GET',
      path: PATH,
      handle(_req, res) {
        const { file, api } = overrides.list();
        const list = [
          ...[...file].filter(([key]) => !api.has(key)).map(([key, a]) => entry(key, 'file', a)),
          ...[...api].map(([key, a]) => entry(key, 'api', a)),
        ].sort((a, b) => (a.key < b.key ? -1 : a.key > b.key ? 1 : 0));
        sendJson(res, 200, JSON.stringify({ overrides: list }));
      },
    },
    {
      method: 'PUT',
      path: `${PATH}/`,
      async handle(req, res, rest) {
        const key = keyOf(rest, res);
        if (key === undefined) return;
        const body = await readAdminJson(req, res);
        if (body === undefined) return;
        const action = parseOverrideAction(body);
        if (typeof action === 'string') return sendError(res, 400, 'invalid_override', action);
        try {
          await overrides.put(key, action);
        } catch (err) {
          return storeFailed(res, err);
        }
        sendJson(res, 200, JSON.stringify(entry(key, 'api', action)));
      },
    },
    {
      method: 'DELETE',
      path: `${PATH}/`,
      async handle(_req, res, rest) {
        const key = keyOf(rest, res);
        if (key === undefined) return;
        let had: boolean;
        try {
          had = await overrides.delete(key);
        } catch (err) {
          return storeFailed(res, err);
        }
        if (!had) {
          const inFile = overrides.list().file.has(key);
          return sendError(
            res,
            404,
            'not_found',
            inFile
              ? `"${key}" is set in the overrides file: edit the file.`
              : `No override "${key}" was set here.`,
          );
        }
        res.writeHead(204).end();
      },
    },
  ];
}
