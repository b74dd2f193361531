// The statistics pages' CSV export through the shipped config's gateway (embedded services, a real
// SQLite file): the exact bytes of a normal and of a large export, streamed in chunks; the bound on
// exports at once per address and in all (429 too_many_exports) held by downloads nobody reads,
// and given back when they go away or stall; the gateway answering /healthz through a burst.
import { once } from 'node:events';
import { connect, type Socket } from 'node:net';
import { Agent } from 'undici';
import { describe, expect } from 'vitest';
import { openDatabase } from '../../../../src/db/database.js';
import type { Gateway } from '../../../../src/runtime/gateway.js';
import { share } from '../../../../src/services/websites/pages/stats-view.js';
import { DEFAULT_CONFIG } from '../../../helpers/default-config.js';
import { ALICE_KEY, embeddedEnv } from '../../../helpers/embedded.js';
import { embeddedTest } from '../../../helpers/fixtures.js';
import { send } from '../../../helpers/gateway.js';
import { waitFor } from '../../../helpers/wait.js';

const NORMAL = 'normal.example';
const LARGE = 'large.example';
/** A site of 20,000 values (about 4 MB of CSV), for the burst. */
const MEDIUM = 'medium.example';
const MEDIUM_VALUES = 20_000;
/** The large site's distinct pages: more than an export's 100,000 rows, each about 200 bytes. */
const LARGE_VALUES = 120_000;
const RANGE = 'from=2026-03-01&to=2026-03-02';
const TOO_MANY = JSON.stringify({
  error: {
    code: 'too_many_exports',
    message: 'Too many CSV exports at once. Please retry when a download has finished.',
  },
});

async function createSite(fresh: Agent, base: string, url: string): Promise<number> {
  const reply = await send(`${base}/api/v1/websites`, {
    dispatcher: fresh,
    method: 'POST',
    headers: {
      host: '127.0.0.1',
      authorization: `Bearer ${ALICE_KEY}`,
      accept: 'application/json',
      'content-type': 'application/x-www-form-urlencoded',
    },
    body: new URLSearchParams({ url, privacy: '0' }).toString(),
  });
  expect(reply.status).toBe(201);
  return (reply.json() as { data: { id: number } }).data.id;
}

/** The large site's page i: a value of about 200 bytes, its count by day (some on both days). */
const largeValue = (i: number) => `/catalogue/${String(i).padStart(6, '0')}/${'x'.repeat(180)}`;
const largeCounts = (i: number): [number, number] => [(i * 7919) % 97, i % 3 === 0 ? (i % 13) + 1 : 0];

/** Writes stats rows straight into the SQLite file (the collector would bound distinct values). */
function seedStats(dataDir: string, normalId: number, largeId: number, mediumId: number): void {
  const db = openDatabase(dataDir);
  const insert = db.prepare(
    'INSERT INTO stats (website_id, name, date, value, count) VALUES (?, ?, ?, ?, ?)',
  );
  db.transaction(() => {
    const normal: [string, string, number][] = [
      ['2026-02-28', '/outside', 50],
      ['2026-03-01', '/', 3],
      ['2026-03-02', '/', 2],
      ['2026-03-01', '/pricing', 2],
      ['2026-03-02', '/docs,"quoted"', 2],
      ['2026-03-01', '=HYPERLINK("x")', 1],
      ['2026-03-02', '/line\nbreak', 1],
      ['2026-03-02', '/b', 1],
      // Past U+FFFF and past U+E000: SQLite's order (UTF-8 bytes) is not JavaScript's (UTF-16).
      ['2026-03-01', '/\u{1F600}', 1],
      ['2026-03-02', '/\uE000', 2],
      ['2026-03-02', '/\u{1F600}', 1],
      ['2026-03-03', '/after', 9],
    ];
    for (const [date, value, count] of normal) insert.run(normalId, 'pages', date, value, count);
    insert.run(normalId, 'referrers', '2026-03-01', 'news.example', 4);
    for (let i = 0; i < LARGE_VALUES; i++) {
      const [first, second] = largeCounts(i);
      insert.run(largeId, 'pages', '2026-03-01', largeValue(i), first + 1);
      if (second > 0) insert.run(largeId, 'pages', '2026-03-02', largeValue(i), second);
    }
    for (let i = 0; i < MEDIUM_VALUES; i++)
      insert.run(mediumId, 'pages', '2026-03-01', largeValue(i), (i % 89) + 1);
  })();
  db.close();
}

/** The large site's values as the model sums them: highest first, ties by value; and their sum. */
function largeRows(): { rows: [string, number][]; sum: number } {
  const rows: [string, number][] = [];
  let sum = 0;
  for (let i = 0; i < LARGE_VALUES; i++) {
    const [first, second] = largeCounts(i);
    rows.push([largeValue(i), first + 1 + second]);
    sum += first + 1 + second;
  }
  rows.sort((a, b) => b[1] - a[1] || (a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : 0));
  return { rows, sum };
}

/** The large export as the model computes it: 100,000 rows. */
function largeExpected(): string {
  const { rows, sum } = largeRows();
  return (
    'value,count,share\r\n' +
    rows
      .slice(0, 100_000)
      .map(([value, count]) => `${value},${count},${share(count, sum)}\r\n`)
      .join('')
  );
}

/** A download that reads until the answer's first bytes arrive (the export has started), then never again. */
async function unreadDownload(gateway: Gateway, path: string, address: string): Promise<Socket> {
  const socket = connect(Number(new URL(gateway.url()).port), '127.0.0.1');
  socket.write(`GET ${path} HTTP/1.1\r\nHost: localhost\r\nX-Forwarded-For: ${address}\r\n\r\n`);
  const [first] = (await once(socket, 'data')) as [Buffer];
  socket.pause();
  expect(first.toString('latin1')).toMatch(/^HTTP\/1\.1 200 OK\r\n/);
  return socket;
}

const test = embeddedTest({
  env: {
    TRUSTED_PROXIES: '127.0.0.1',
    EXPORTS_TOTAL: '4',
    // Longer than any test holds an unread download: the stall is `stalling`'s.
    EXPORT_STALL_TIMEOUT: '10m',
  },
})
  /**
   * A connection per request: the set-up below holds this process's event loop for seconds, past
   * the gateway's keep-alive timeout, and a pooled connection could be closed under the next request.
   */
  .extend('fresh', { scope: 'file' }, ({}, { onCleanup }) => {
    const fresh = new Agent({ pipelining: 0 });
    onCleanup(() => fresh.close());
    return fresh;
  })
  /** The gateway's URL, once its three sites and their statistics are in the database. */
  .extend('base', { scope: 'file' }, async ({ gateway, dataDir, fresh }) => {
    const base = gateway.url();
    const [normalId, largeId, mediumId] = [
      await createSite(fresh, base, NORMAL),
      await createSite(fresh, base, LARGE),
      await createSite(fresh, base, MEDIUM),
    ];
    seedStats(dataDir, normalId, largeId, mediumId);
    return base;
  })
  /** A second gateway on the same database: one export per address, cut after 1 s unread. */
  .extend('stalling', { scope: 'file' }, ({ dataDir, base: _seeded, gateways }) =>
    gateways.start(
      DEFAULT_CONFIG,
      embeddedEnv(dataDir, {
        TRUSTED_PROXIES: '127.0.0.1',
        EXPORTS_PER_ADDRESS: '1',
        EXPORT_STALL_TIMEOUT: '1s',
      }),
    ),
  )
  .extend('expected', { scope: 'file' }, () => largeExpected())
  /** Sockets of unread downloads, destroyed after the last test if a test did not. */
  .extend('sockets', { scope: 'file' }, ({}, { onCleanup }) => {
    const sockets: Socket[] = [];
    onCleanup(() => {
      for (const s of sockets) s.destroy();
    });
    return sockets;
  })
  .extend(
    'get',
    { scope: 'file' },
    ({ base, fresh }) =>
      (path: string, address: string) =>
        send(`${base}${path}`, { dispatcher: fresh, headers: { 'x-forwarded-for': address } }),
  );

describe('CSV exports', () => {
  // The first test sets the file up (three sites, 140,000 rows of statistics): a longer timeout.
  test('a normal export: exactly the bytes of the whole table', { timeout: 120_000 }, async ({ get }) => {
    const reply = await get(`/${NORMAL}/pages.csv?${RANGE}`, '198.51.100.1');
    expect(reply.status).toBe(200);
    expect(reply.headers).toMatchObject({
      'content-type': 'text/csv; charset=utf-8',
      'content-disposition': `attachment; filename="${NORMAL}-pages-2026-03-01-2026-03-02.csv"`,
      'x-content-type-options': 'nosniff',
      'cache-control': 'no-store',
    });
    expect(reply.text).toBe(
      [
        'value,count,share',
        '/,5,31.3%',
        '"/docs,""quoted""",2,12.5%',
        '/pricing,2,12.5%',
        '/\uE000,2,12.5%',
        '/\u{1F600},2,12.5%',
        '/b,1,6.3%',
        '"/line\nbreak",1,6.3%',
        `"'=HYPERLINK(""x"")",1,6.3%`,
        '',
      ].join('\r\n'),
    );
    const searched = await get(`/${NORMAL}/pages.csv?${RANGE}&search=PRIC`, '198.51.100.1');
    expect(searched.text).toBe('value,count,share\r\n/pricing,2,100.0%\r\n');
    const empty = await get(`/${NORMAL}/pages.csv?from=2025-01-01&to=2025-01-02`, '198.51.100.1');
    expect(empty.text).toBe('value,count,share\r\n');
  });

  test(
    'a large export streams in chunks and matches the model byte for byte',
    { timeout: 120_000 },
    async ({ get, expected }) => {
      const reply = await get(`/${LARGE}/pages.csv?${RANGE}`, '198.51.100.2');
      expect(reply.status).toBe(200);
      expect(reply.headers['transfer-encoding']).toBe('chunked');
      expect(reply.headers['content-length']).toBeUndefined();
      expect(reply.text.length).toBe(expected.length);
      expect(reply.text === expected).toBe(true);
    },
  );

  test("a large site's dimension page: its page of values, the totals of all", async ({ get }) => {
    const reply = await get(`/${LARGE}/pages?${RANGE}&page=2`, '198.51.100.3');
    expect(reply.status).toBe(200);
    const { rows, sum } = largeRows();
    const cells = [
      ...reply.text.matchAll(/<td class="value bar s\d+">([^<]*)<\/td>\s*<td class="num">([^<]*)<\/td>/g),
    ];
    expect(cells.map((m) => [m[1], Number(m[2]!.replace(/,/g, ''))])).toEqual(rows.slice(100, 200));
    expect(reply.text.replace(/\s+/g, ' ')).toContain(
      `120,000 values, ${sum.toLocaleString('en-US')} in all.`,
    );
  }, 120_000);

  test('unread downloads hold their slots: the third from one address, the fifth in all, get 429', async ({
    gateway,
    get,
    sockets,
  }) => {
    const path = `/${LARGE}/pages.csv?${RANGE}`;
    for (const address of ['203.0.113.1', '203.0.113.1'])
      sockets.push(await unreadDownload(gateway, path, address));
    const third = await get(path, '203.0.113.1');
    expect(third.status).toBe(429);
    expect(third.headers['content-type']).toBe('application/json; charset=utf-8');
    expect(third.headers['retry-after']).toBe('5');
    expect(third.text).toBe(TOO_MANY);
    // Another address still gets one; the bound in all (4 here) holds past it.
    for (const address of ['203.0.113.2', '203.0.113.2'])
      sockets.push(await unreadDownload(gateway, path, address));
    const fifth = await get(`/${NORMAL}/pages.csv?${RANGE}`, '203.0.113.3');
    expect(fifth.status).toBe(429);
    expect(fifth.text).toBe(TOO_MANY);

    // The readers go away: every slot comes back.
    for (const s of sockets.splice(0)) s.destroy();
    const again = await waitFor(
      () => get(`/${NORMAL}/pages.csv?${RANGE}`, '203.0.113.1'),
      (r) => r.status === 200,
      { timeoutMs: 60_000, what: 'a slot given back' },
    );
    expect(again.text.startsWith('value,count,share\r\n/,5,31.3%\r\n')).toBe(true);
    const all = await Promise.all(
      ['203.0.113.1', '203.0.113.1', '203.0.113.2', '203.0.113.2'].map((a) =>
        get(`/${NORMAL}/pages.csv?${RANGE}`, a),
      ),
    );
    expect(all.map((r) => r.status)).toEqual([200, 200, 200, 200]);
  }, 120_000);

  test('/healthz answers through a burst of exports, and every export is whole', async ({
    base,
    get,
    fresh,
  }) => {
    let sum = 0;
    const rows: [string, number][] = [];
    for (let i = 0; i < MEDIUM_VALUES; i++) {
      rows.push([largeValue(i), (i % 89) + 1]);
      sum += (i % 89) + 1;
    }
    rows.sort((a, b) => b[1] - a[1] || (a[0] < b[0] ? -1 : 1));
    const medium = 'value,count,share\r\n' + rows.map(([v, c]) => `${v},${c},${share(c, sum)}\r\n`).join('');

    const burst = Promise.allSettled(
      Array.from({ length: 12 }, (_, i) => get(`/${MEDIUM}/pages.csv?${RANGE}`, `192.0.2.${i + 1}`)),
    );
    let settled = false;
    void burst.then(() => (settled = true));
    const probes: number[] = [];
    while (!settled) {
      probes.push((await send(`${base}/healthz`, { dispatcher: fresh })).status);
      await new Promise((resolve) => setImmediate(resolve));
    }
    const replies = (await burst).map((r) => {
      if (r.status === 'rejected') throw r.reason;
      return r.value;
    });
    // 4 at once in all here: the others are refused; none fails, none is cut.
    expect(replies.filter((r) => r.status !== 200 && r.status !== 429)).toEqual([]);
    expect(replies.filter((r) => r.status === 200).length).toBeGreaterThanOrEqual(4);
    for (const r of replies) expect(r.status === 200 ? r.text === medium : r.text === TOO_MANY).toBe(true);
    expect(probes.length).toBeGreaterThanOrEqual(1);
    expect(probes.every((s) => s === 200)).toBe(true);
  }, 120_000);

  test('120 unread downloads from 60 addresses: 4 held, 116 refused, and the memory stays flat', async ({
    base,
    get,
    sockets,
  }) => {
    const path = `/${LARGE}/pages.csv?${RANGE}`;
    const before = process.memoryUsage.rss();
    const port = Number(new URL(base).port);
    const answers = await Promise.all(
      Array.from({ length: 120 }, async (_, i) => {
        const socket = connect(port, '127.0.0.1');
        sockets.push(socket);
        socket.write(
          `GET ${path} HTTP/1.1\r\nHost: localhost\r\nX-Forwarded-For: 198.18.0.${i % 60}\r\n\r\n`,
        );
        const [first] = (await once(socket, 'data')) as [Buffer];
        socket.pause();
        return first.toString('latin1').split('\r\n')[0];
      }),
    );
    const grown = process.memoryUsage.rss() - before;
    expect(answers.filter((a) => a === 'HTTP/1.1 200 OK')).toHaveLength(4);
    expect(answers.filter((a) => a === 'HTTP/1.1 429 Too Many Requests')).toHaveLength(116);
    // Built whole, 4 exports of 20.8 MB alone would be over 80 MB of strings; streamed, a few chunks.
    expect(grown).toBeLessThan(200 * 1024 * 1024);
    for (const s of sockets.splice(0)) s.destroy();
    await waitFor(
      () => get(`/${NORMAL}/pages.csv?${RANGE}`, '198.18.0.1'),
      (r) => r.status === 200,
      { timeoutMs: 60_000, what: 'the slots given back' },
    );
  }, 180_000);

  test('a download that stops reading is cut after the stall timeout, and its slot comes back', async ({
    stalling,
    fresh,
    expected,
  }) => {
    const path = `/${LARGE}/pages.csv?${RANGE}`;
    const socket = await unreadDownload(stalling, path, '203.0.113.9');
    const held = await send(`${stalling.url()}${path}`, {
      dispatcher: fresh,
      headers: { 'x-forwarded-for': '203.0.113.9' },
    });
    expect(held.status).toBe(429);
    expect(held.text).toBe(TOO_MANY);
    // Nobody reads the socket: the export is cut, and the address gets a slot again.
    const again = await waitFor(
      () =>
        send(`${stalling.url()}/${NORMAL}/pages.csv?${RANGE}`, {
          dispatcher: fresh,
          headers: { 'x-forwarded-for': '203.0.113.9' },
        }),
      (r) => r.status === 200,
      { timeoutMs: 60_000, what: 'the stalled export cut' },
    );
    expect(again.text.startsWith('value,count,share\r\n/,5,31.3%\r\n')).toBe(true);
    // What was buffered arrives, then the connection ends short of the whole export.
    let received = 0;
    socket.on('data', (chunk: Buffer) => (received += chunk.length));
    socket.resume();
    await once(socket, 'close');
    expect(received).toBeLessThan(expected.length);
  }, 120_000);
});
