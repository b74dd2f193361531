import { gatewayYaml, REDIS_STORE } from './gateway.js';

/** The message of the limiter every forward-auth test counts against. */
export const LIMIT_MESSAGE = 'Too many requests for this run. Please slow down.';
/** The exact 429 body of that limiter, as a proxy listener answers it. */
export const LIMITED_BODY = JSON.stringify({ error: { code: 'rate_limited', message: LIMIT_MESSAGE } });
export const INVALID_TOKEN_BODY = JSON.stringify({
  error: { code: 'invalid_token', message: 'API token is invalid or has been revoked.' },
});
/** The workspace token the static store accepts (id 7, secret s3cret). */
export const GOOD_TOKEN = 'Bearer 7|s3cret';

/**
 * A gateway with a proxy listener ("public") and two decision listeners ("decision", answering 429,
 * and "nginx", onLimited 403) over one Redis. Every limiter keys on X-Run too, so each test counts
 * on counters of its own:
 * - /run/*: 3 per minute per client IP and run (message LIMIT_MESSAGE);
 * - /api/*: 5 per minute per workspace token and run (a bad token: 401 after counting);
 * - /open/*: no limiter;
 * - /browser/*: as /run/*, with CORS.
 */
export function forwardAuthConfig(limit = 3): string {
  return gatewayYaml(
    `
${REDIS_STORE}
identity:
  trustedProxies: 127.0.0.1
  workspaceTokens:
    static: [{ id: "7", sha256: 1ec1c26b50d5d3c58d9583181af8076655fe00756bf7285940ba3670f99fcba0 }]
upstreams: { app: { url: "\${UPSTREAM_URL}" } }
limiters:
  per-run:
    message: ${JSON.stringify(LIMIT_MESSAGE)}
    windows: [{ limit: ${limit}, period: 1m, key: [ip, "header:X-Run"] }]
  per-token:
    windows: [{ limit: 5, period: 1m, key: [workspace_token, "header:X-Run"] }]
cors:
  any: { origins: '*', methods: [GET, POST], maxAge: 10m }
routes:
  - { name: browser, hosts: [app.test], paths: [/browser/*], upstream: app, cors: any, limiters: [per-run] }
  - { name: run, hosts: [app.test], paths: [/run/*], upstream: app, limiters: [per-run] }
  - { name: api, hosts: [app.test], paths: [/api/*], upstream: app, limiters: [per-token] }
  - { name: open, hosts: [app.test], paths: [/open/*], upstream: app }
`,
    {
      admin: true,
      listeners: [
        { name: 'public' },
        { name: 'decision', mode: 'decision' },
        { name: 'nginx', mode: 'decision', onLimited: 403 },
      ],
    },
  );
}
