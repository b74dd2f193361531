import type { ServerResponse } from 'node:http';
import type { WindowStore } from '../store/window-store.js';
import { sendJson } from './responses.js';

/** GET /readyz: 200 when the store runs its script, else 503 with the store's reason. */
export async function answerReadyz(
  res: ServerResponse,
  store: WindowStore,
  headers: Record<string, string>,
): Promise<void> {
  const readiness = await store.readiness();
  if (readiness.ready) return sendJson(res, 200, '{"status":"ready"}', headers);
  const body = JSON.stringify({ status: 'store_unavailable', reason: readiness.reason });
  sendJson(res, 503, body, headers);
}
