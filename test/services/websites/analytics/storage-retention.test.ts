// What the database keeps, through the real gateway: the collector's distinct values per day, and the
// retention of raw widget events.
import Database from 'better-sqlite3';
import { join } from 'node:path';
import { describe, expect } from 'vitest';
import { dayOf } from '../../../../src/services/websites/analytics/days.js';
import { ALICE_KEY } from '../../../helpers/embedded.js';
import { embeddedTest } from '../../../helpers/fixtures.js';
import { send, type Reply } from '../../../helpers/gateway.js';
import { waitFor } from '../../../helpers/wait.js';

const FORM = 'application/x-www-form-urlencoded;charset=UTF-8';
const FIREFOX = 'Mozilla/5.0 (X11; Linux x86_64; rv:120.0) Gecko/20100101 Firefox/120.0';
const TODAY = dayOf(Date.now());

const test = embeddedTest({
  workspaces: ['acme'],
  env: {
    TRUSTED_PROXIES: '127.0.0.1',
    ANALYTICS_MAX_DISTINCT_VALUES: '3',
    // Events are kept 1 ms; the housekeeping looks every second.
    WIDGET_EVENTS_RETENTION: '1',
    HOUSEKEEPING_INTERVAL: '1s',
  },
})
  .extend(
    'post',
    ({ gateway }) =>
      (path: string, body: string, headers: Record<string, string>): Promise<Reply> =>
        send(`${gateway.url()}${path}`, { method: 'POST', headers, body }),
  )
  .extend(
    'collect',
    ({ post }) =>
      (fields: Record<string, string>, ip: string) =>
        post('/api/event', new URLSearchParams(fields).toString(), {
          'content-type': FORM,
          'user-agent': FIREFOX,
          'x-forwarded-for': ip,
        }),
  )
  .extend(
    'stats',
    ({ gateway }) =>
      async function stats(id: number, name: string): Promise<unknown> {
        const reply = await send(
          `${gateway.url()}/api/v1/stats/${id}?name=${name}&from=${TODAY}&to=${TODAY}`,
          {
            headers: { accept: 'application/json', authorization: `Bearer ${ALICE_KEY}` },
          },
        );
        expect(reply.status, reply.text).toBe(200);
        return (reply.json() as { data: unknown }).data;
      },
  );

describe('the collector bounds distinct values per website, dimension and day', () => {
  test('past the bound, new values count under "(other)"; known ones keep counting', async ({
    post,
    collect,
    stats,
  }) => {
    const created = await post(
      '/api/v1/websites',
      new URLSearchParams({ url: 'bounded.example' }).toString(),
      {
        authorization: `Bearer ${ALICE_KEY}`,
        'content-type': FORM,
        accept: 'application/json',
      },
    );
    expect(created.status, created.text).toBe(201);
    const id = (created.json() as { data: { id: number } }).data.id;
    const visits: [string, string][] = [
      ['/a', 'https://one.example/'],
      ['/b', 'https://two.example/'],
      ['/c', 'https://three.example/'],
      ['/d', 'https://four.example/'],
      ['/a', 'https://one.example/'],
      ['/e', 'https://five.example/'],
    ];
    let ip = 0;
    for (const [page, referrer] of visits) {
      const reply = await collect({ page: `https://bounded.example${page}`, referrer }, `203.0.113.${++ip}`);
      expect(reply.status, reply.text).toBe(200);
    }
    for (const value of ['x', 'y', 'z', 'w']) {
      const reply = await collect(
        { page: 'https://bounded.example/a', 'event[name]': value, 'event[value]': '5' },
        `203.0.113.${++ip}`,
      );
      expect(reply.status, reply.text).toBe(200);
    }
    const sorted = (rows: unknown) =>
      (rows as { value: string; count: number }[]).sort((a, b) => a.value.localeCompare(b.value));
    expect(sorted(await stats(id, 'pages'))).toEqual([
      { value: '(other)', count: 2 },
      { value: '/a', count: 2 },
      { value: '/b', count: 1 },
      { value: '/c', count: 1 },
    ]);
    expect(sorted(await stats(id, 'referrers'))).toEqual([
      { value: '(other)', count: 2 },
      { value: 'one.example', count: 2 },
      { value: 'three.example', count: 1 },
      { value: 'two.example', count: 1 },
    ]);
    // Events carry their value sums (issue 20): "w"'s value counts under "(other)" with it.
    const five = [{ count: 1, total: 5, unit: '' }];
    expect(sorted(await stats(id, 'events'))).toEqual([
      { value: '(other)', count: 1, values: five },
      { value: 'x', count: 1, values: five },
      { value: 'y', count: 1, values: five },
      { value: 'z', count: 1, values: five },
    ]);
  });
});

describe('raw widget events are kept for their retention', () => {
  test('then deleted by the housekeeping, with no request to trigger it', async ({ post, dataDir }) => {
    const init = await post('/api/v1/widget/init', JSON.stringify({ workspace: 'acme' }), {
      'content-type': 'application/json',
      'x-forwarded-for': '192.0.2.50',
    });
    const { token } = init.json() as { token: string };
    const events = Array.from({ length: 50 }, () => ({ type: 'page_view' }));
    const reply = await post('/api/v1/widget/events', JSON.stringify({ events }), {
      'content-type': 'application/json',
      authorization: `Bearer ${token}`,
      'x-forwarded-for': '192.0.2.50',
    });
    expect(reply.status).toBe(202);
    const db = new Database(join(dataDir, 'tollgate.db'), { readonly: true });
    try {
      const count = () => db.prepare('SELECT count(*) FROM widget_events').pluck().get() as number;
      await waitFor(count, (n) => n === 0, { timeoutMs: 30_000, what: 'the events to expire' });
      // The session and its conversation are not events: they stay.
      expect(db.prepare('SELECT count(*) FROM widget_sessions').pluck().get()).toBe(1);
    } finally {
      db.close();
    }
  });
});
