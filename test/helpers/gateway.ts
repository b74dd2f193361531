import { pino } from 'pino';
import { request, type Dispatcher } from 'undici';
import { startGatewayWithServices } from '../../src/cli/wiring.js';
import { loadConfigText } from '../../src/rules/load.js';
import type { Gateway, GatewayOptions } from '../../src/runtime/gateway.js';

export const silentLogger = pino({ level: 'silent' });

/** One listener of a test gateway; it always binds 127.0.0.1 on an ephemeral port. */
export interface TestListener {
  readonly name?: string;
  readonly ietfHeaders?: boolean;
  readonly protocol?: 'http' | 'https';
  /** A decision listener (forward-auth) instead of a proxy. */
  readonly mode?: 'proxy' | 'decision';
  readonly onLimited?: 429 | 403;
}

export interface GatewayYamlOptions {
  /** Default: one listener, named "public". */
  readonly listeners?: readonly TestListener[];
  /** Also an admin listener (GET /metrics), on an ephemeral port too. */
  readonly admin?: boolean;
}

/**
 * The Redis store at ${REDIS_URL}. The command timeout is generous on purpose: exactness tests
 * must count, not fail open, when a loaded machine makes Redis slower than the 50 ms default.
 */
export const REDIS_STORE = "store: { redis: { url: '${REDIS_URL}', commandTimeout: 2s } }";

/**
 * A test gateway's config: the listener block every test shares (loopback, port 0: no port is
 * ever chosen by a test), then the test's own sections (store, upstreams, limiters, routes...).
 */
export function gatewayYaml(sections: string, options: GatewayYamlOptions = {}): string {
  const listeners = (options.listeners ?? [{}]).map(
    (l) => `  - ${JSON.stringify({ host: '127.0.0.1', port: 0, ...l })}`,
  );
  const admin = options.admin ? ['admin: { host: 127.0.0.1, port: 0 }'] : [];
  return ['listeners:', ...listeners, ...admin, sections.trim(), ''].join('\n');
}

/**
 * Starts a gateway from YAML text (env references resolved from `env`), on an ephemeral port, with
 * the embedded services wired in as `tollgate start` does.
 */
export async function startGateway(
  yaml: string,
  env: Record<string, string> = {},
  options: Partial<GatewayOptions> = {},
): Promise<Gateway> {
  const table = loadConfigText(yaml, 'test.yaml', { ...env });
  return startGatewayWithServices(table, { logger: silentLogger, ...options });
}

export interface Reply {
  readonly status: number;
  readonly headers: Record<string, string>;
  readonly text: string;
  json(): unknown;
  /** When the request was sent and its answer's headers came (Date.now()), for time checks on a loaded machine. */
  readonly sentAtMs?: number;
  readonly receivedAtMs?: number;
}

/** One request; headers come back as a plain lower-case map, the body as text. */
export async function send(
  url: string,
  options: { method?: string; headers?: Record<string, string>; body?: string; dispatcher?: Dispatcher } = {},
): Promise<Reply> {
  const sentAtMs = Date.now();
  const res = await request(url, {
    method: (options.method ?? 'GET') as Dispatcher.HttpMethod,
    headers: options.headers,
    body: options.body,
    dispatcher: options.dispatcher,
  });
  const receivedAtMs = Date.now();
  const text = await res.body.text();
  const headers: Record<string, string> = {};
  for (const [k, v] of Object.entries(res.headers))
    if (v !== undefined) headers[k] = Array.isArray(v) ? v.join(', ') : v;
  return {
    status: res.statusCode,
    headers,
    text,
    json: () => JSON.parse(text) as unknown,
    sentAtMs,
    receivedAtMs,
  };
}

/** The X-RateLimit-* and Retry-After headers of a reply, for exact comparison. */
export function limitHeaders(reply: Reply): Record<string, string> {
  const out: Record<string, string> = {};
  for (const name of ['x-ratelimit-limit', 'x-ratelimit-remaining', 'x-ratelimit-reset', 'retry-after']) {
    if (reply.headers[name] !== undefined) out[name] = reply.headers[name];
  }
  return out;
}
