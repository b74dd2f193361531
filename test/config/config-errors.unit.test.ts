// Config errors name the bad value, the allowed set and the likely meant one, at the right line
// (issue 22: key parts, duplicate parts, a misspelt field, a misspelt section, an unknown option).
import { describe, expect, test } from 'vitest';
import { configErrorOf } from '../helpers/config-errors.js';

/** A config with one limiter whose window is `window` (line 7), used by the route. */
const withWindow = (window: string) => `listeners: [{ port: 0 }]
upstreams:
  app: { url: "http://127.0.0.1:9" }
limiters:
  l:
    windows:
      - ${window}
routes:
  - { name: all, paths: ["/*"], upstream: app, limiters: [l] }
`;

describe('config errors', () => {
  test.each([
    [
      'key: [ipp]',
      '{ limit: 1, period: 1m, key: [ipp] }',
      'conf.yaml:7:39: limiters.l.windows[0].key[0]: unknown key part "ipp"; expected one of ip, user_agent, jwt, workspace_token or header:<Header-Name>; did you mean ip?',
    ],
    [
      'key: [header:]',
      "{ limit: 1, period: 1m, key: ['header:'] }",
      'conf.yaml:7:39: limiters.l.windows[0].key[0]: not a header key part: "header:" (use header:<Header-Name>, letters, digits and "-", e.g. header:X-Api-Key)',
    ],
    [
      'key: [header:X_Bad]',
      "{ limit: 1, period: 1m, key: ['header:X_Bad'] }",
      'conf.yaml:7:39: limiters.l.windows[0].key[0]: not a header key part: "header:X_Bad" (use header:<Header-Name>, letters, digits and "-", e.g. header:X-Api-Key)',
    ],
    [
      'key: [jwt, jwt]',
      '{ limit: 1, period: 1m, key: [jwt, jwt] }',
      'conf.yaml:7:44: limiters.l.windows[0].key[1]: duplicate key part "jwt": each part may appear once',
    ],
    [
      '{ limt: 10 }',
      '{ limt: 10, period: 1m, key: [ip] }',
      'conf.yaml:7:11: limiters.l.windows[0].limt: limit is required; did you mean limit?',
    ],
    [
      'a misspelt algorithm',
      '{ limit: 1, period: 1m, key: [ip], algorithm: slidng }',
      'conf.yaml:7:55: limiters.l.windows[0].algorithm: unknown value "slidng"; expected one of fixed, sliding, token-bucket; did you mean sliding?',
    ],
    [
      'an unknown field far from any',
      '{ limit: 1, period: 1m, key: [ip], colour: red }',
      'conf.yaml:7:44: limiters.l.windows[0].colour: unknown field "colour"; allowed: limit, period, algorithm, burst, align, timeZone, weekStart, tiers, key, lease',
    ],
    [
      'a field missing with no typo beside it',
      '{ period: 1m, key: [ip] }',
      'conf.yaml:7:9: limiters.l.windows[0].limit: limit is required',
    ],
  ])('%s', (_, window, expected) => {
    expect(configErrorOf(withWindow(window))).toBe(expected);
  });

  test('a top-level `limiter:` points at its own line, not the top of the file', () => {
    const yaml = withWindow('{ limit: 1, period: 1m, key: [ip] }').replace(
      'routes:',
      'limiter:\n  other:\n    windows: [{ limit: 1, period: 1m, key: [ip] }]\nroutes:',
    );
    expect(yaml.split('\n')[7]).toBe('limiter:'); // line 8
    expect(configErrorOf(yaml)).toBe(
      'conf.yaml:8:1: limiter: unknown field "limiter"; allowed: listeners, admin, rateLimitService, workers, shadow, reload, log, shutdown, store, identity, tiers, services, requests, streams, upstreams, limiters, cors, routes; did you mean limiters?',
    );
  });

  test('an unknown limiter, upstream or CORS policy name says which was meant', () => {
    const yaml = withWindow('{ limit: 1, period: 1m, key: [ip] }').replace(
      'upstream: app, limiters: [l]',
      'upstream: ap, limiters: [m], cors: widgte',
    );
    const message = configErrorOf(`${yaml}cors:\n  widget: { origins: '*' }\n`);
    expect(message.split('\n')).toEqual([
      'conf.yaml:9:43: routes[0].upstream: unknown upstream "ap"; did you mean app?',
      'conf.yaml:9:58: routes[0].limiters[0]: unknown limiter "m"; did you mean l?',
      'conf.yaml:9:68: routes[0].cors: unknown CORS policy "widgte"; did you mean widget?',
    ]);
  });
});
