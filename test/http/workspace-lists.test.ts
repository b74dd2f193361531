// Allow and deny lists by workspace: a request whose verified workspace token belongs to a listed
// workspace is exempt (allow) or refused 403 (deny); a token of another workspace, or none, is
// counted as usual.
import { describe, expect } from 'vitest';
import { sha256Hex } from '../../src/credentials/digest.js';
import { gatewayTest } from '../helpers/fixtures.js';
import { gatewayYaml, send } from '../helpers/gateway.js';

const token = (id: string, workspace: string) =>
  `{ id: ${id}, sha256: '${sha256Hex('s3cret')}', workspace: ${workspace} }`;

const test = gatewayTest({
  config: gatewayYaml(`
store:
  redis: { url: '\${REDIS_URL}', keyPrefix: 'wl:' }
identity:
  workspaceTokens:
    source: static
    static: [${token('t-vip', 'vip')}, ${token('t-blocked', 'blocked')}, ${token('t-plain', 'plain')}]
upstreams:
  app: { url: '\${UPSTREAM_URL}' }
limiters:
  api:
    windows: [{ limit: 1, period: 1h, key: [ip] }]
    allow: { workspaces: [vip] }
    deny: { workspaces: [blocked] }
routes:
  - { name: r, paths: ['/*'], upstream: app, limiters: [api] }
`),
});

const DENIED = { error: { code: 'denied', message: 'Requests from this client are refused here.' } };

describe('lists by workspace', () => {
  test('allow exempts a listed workspace, deny refuses one; others are counted', async ({ gateway }) => {
    const as = (id?: string) =>
      send(`${gateway.url()}/x`, id ? { headers: { authorization: `Bearer ${id}|s3cret` } } : {});
    // The vip workspace passes beyond the limit of 1, with no window headers (nothing counted).
    for (let i = 0; i < 3; i++) {
      const reply = await as('t-vip');
      expect(reply.status).toBe(200);
      expect(reply.headers['x-ratelimit-limit']).toBeUndefined();
    }
    const blocked = await as('t-blocked');
    expect(blocked.status).toBe(403);
    expect(blocked.json()).toEqual(DENIED);
    // Another workspace is counted against the address's window: 1, then refused.
    expect((await as('t-plain')).status).toBe(200);
    expect((await as('t-plain')).status).toBe(429);
    // A wrong secret verifies no token, so no workspace: counted (and refused) as usual.
    const wrong = await send(`${gateway.url()}/x`, { headers: { authorization: 'Bearer t-vip|nope' } });
    expect(wrong.status).toBe(429);
  });
});
