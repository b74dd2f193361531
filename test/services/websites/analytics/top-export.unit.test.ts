import fc from 'fast-check';
import { test as base, describe, expect } from 'vitest';
import { openDatabase } from '../../../../src/db/database.js';
import { createStatsSource } from '../../../../src/services/websites/analytics/sqlite-stats-source.js';
import { createTopExporter } from '../../../../src/services/websites/analytics/top-export.js';
import { utf8Compare } from '../../../../src/services/websites/analytics/utf8-order.js';
import type { ValueCount } from '../../../../src/services/websites/analytics/stats-source.js';
import { newDataDir } from '../../../helpers/embedded.js';

/** A database of the file's own, its stats rows without websites (no foreign keys). */
const test = base.extend('db', { scope: 'file' }, ({}, { onCleanup }) => {
  const db = openDatabase(newDataDir());
  db.pragma('foreign_keys = OFF');
  onCleanup(() => {
    db.close();
  });
  return db;
});

const DATES = ['2026-03-01', '2026-03-02', '2026-03-03', '2026-03-04'];
/** Characters whose order differs between UTF-16 and UTF-8, and some that CSV and search care about. */
const char = fc.constantFrom('a', 'B', '/', ',', 'é', '\uE000', '\u{1F600}', '\uFFFD');
const value = fc.array(char, { minLength: 0, maxLength: 3 }).map((cs) => cs.join(''));
const row = fc.record({
  site: fc.constantFrom(1, 1, 1, 2),
  name: fc.constantFrom('pages', 'referrers'),
  date: fc.constantFrom(...DATES),
  value,
  count: fc.integer({ min: 1, max: 20 }),
});

describe('the CSV exporter against the stats source', () => {
  test('utf8Compare orders as UTF-8 bytes do (SQLite BINARY)', () => {
    fc.assert(
      fc.property(fc.string({ unit: 'grapheme' }), fc.string({ unit: 'grapheme' }), (a, b) => {
        expect(Math.sign(utf8Compare(a, b))).toBe(Math.sign(Buffer.compare(Buffer.from(a), Buffer.from(b))));
      }),
    );
  });

  test('every value once, summed over the range, highest first, ties by value, from the offset, the same totals', async ({
    db,
  }) => {
    const insert = db.prepare(
      `INSERT INTO stats (website_id, name, date, value, count) VALUES (@site, @name, @date, @value, @count)
       ON CONFLICT DO UPDATE SET count = count + excluded.count`,
    );
    const exporter = createTopExporter(db);
    await fc.assert(
      fc.asyncProperty(
        fc.array(row, { maxLength: 1500, size: 'max' }),
        fc.integer({ min: 0, max: 3 }),
        fc.integer({ min: 0, max: 3 }),
        fc.option(fc.constantFrom('a', 'É', '/', '\u{1F600}'), { nil: undefined }),
        fc.integer({ min: 1, max: 500 }),
        fc.integer({ min: 0, max: 300 }),
        async (rows, a, b, search, limit, offset) => {
          db.exec('DELETE FROM stats');
          db.transaction(() => rows.forEach((r) => insert.run(r)))();
          const range = { from: DATES[Math.min(a, b)]!, to: DATES[Math.max(a, b)]! };
          const want = createStatsSource(db).top(1, 'pages', range, {
            search,
            sort: 'max',
            limit,
            offset,
          });
          const got: ValueCount[] = [];
          const totals = new Set<string>();
          for await (const page of exporter.pages(1, 'pages', range, {
            search,
            offset,
            limit,
            signal: new AbortController().signal,
          })) {
            got.push(...page.rows);
            totals.add(`${page.total} ${page.sum}`);
          }
          expect(got).toEqual(want.rows);
          expect([...totals]).toEqual([`${want.total} ${want.sum}`]);
        },
      ),
      { numRuns: 40 },
    );
  });

  test('an aborted export stops and closes its connection', async ({ db }) => {
    db.exec('DELETE FROM stats');
    const insert = db.prepare("INSERT INTO stats VALUES (1, 'pages', '2026-03-01', ?, 1)");
    db.transaction(() => {
      for (let i = 0; i < 2000; i++) insert.run(`/v${i}`);
    })();
    const done = new AbortController();
    const pages = createTopExporter(db).pages(
      1,
      'pages',
      { from: DATES[0]!, to: DATES[0]! },
      { offset: 0, limit: 100_000, signal: done.signal },
    );
    const first = await pages.next();
    expect(first.done).toBe(false);
    done.abort();
    expect(await pages.next()).toEqual({ done: true, value: undefined });
  });
});
