import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { TEST_JWT_SECRET } from './tokens.js';

/** The shipped config/gateway.yaml, for tests that exercise the default limiters. */
export const DEFAULT_CONFIG = readFileSync(new URL('../../config/gateway.yaml', import.meta.url), 'utf8');

/** Environment that points the default config at test upstreams and an ephemeral port. */
export function defaultEnv(upstreamUrl: string, extra: Record<string, string> = {}): Record<string, string> {
  return {
    HOST: '127.0.0.1',
    PORT: '0',
    ADMIN_PORT: '0',
    WEBSITES_UPSTREAM: upstreamUrl,
    REPORTS_UPSTREAM: upstreamUrl,
    WIDGET_UPSTREAM: upstreamUrl,
    BULKSYNC_UPSTREAM: upstreamUrl,
    WIDGET_JWT_SECRET: TEST_JWT_SECRET,
    // Exactness tests must not fail open because a loaded CI machine made Redis slower than 50 ms.
    REDIS_COMMAND_TIMEOUT: '2s',
    // The services database (workspace tokens) of this gateway alone.
    DATA_DIR: mkdtempSync(join(tmpdir(), 'tollgate-test-')),
    ...extra,
  };
}
