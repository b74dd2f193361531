import { setImmediate as nextTurn } from 'node:timers/promises';
import Database from 'better-sqlite3';
import type { Db } from '../../../db/database.js';
import { daysBetween } from './days.js';
import { utf8Compare } from './utf8-order.js';
import type { DayRange, Dimension, TopChunk, TopPagesQuery, ValueCount } from './stats-source.js';
import { dayValues } from './tables/stats.js';

/**
 * A dimension's values over a range, highest count first (ties by value), read in short
 * statements so that no export holds the event loop, a statement or a read snapshot for long:
 *
 * 1. each day of the range is read in value order (keyset pages on the primary key, tables/stats.ts), and the days
 *    are merged, so each value's sum is complete when it comes out; it is appended to a TEMP table
 *    of a connection of the export's own, on disk (TEMP_STORE file), with its order key (−count,
 *    ordinal): the memory used does not grow with the number of values;
 * 2. the values are read back in keyset pages on that order key.
 *
 * The work yields to the event loop every few ms. The rows are not one snapshot: a visit recorded
 * meanwhile may or may not be counted, but every value appears once and the sum is of the rows
 * read, so the shares add up.
 */

export interface TopExporter {
  pages(site: number, dimension: Dimension, range: DayRange, query: TopPagesQuery): AsyncGenerator<TopChunk>;
}

/** Rows per page read back (and per chunk written). */
export const EXPORT_PAGE_ROWS = 256;
/** Rows per page of one day: a range of a year holds about 367 × 64 values at once. */
const DAY_PAGE_ROWS = 64;
/** The longest the summing holds the event loop before it yields. */
const SLICE_MS = 4;
/** Summed values appended per transaction. */
const BATCH_VALUES = 64;

type Named = Record<string, unknown>;

interface Ranked {
  value: string;
  count: number;
  neg: number;
  id: number;
}

/**
 * A connection of one export's own on the database file: read-only, small caches, its TEMP
 * tables on disk; closing it discards them at once (no DROP of a large table on the event loop).
 */
function exportConnection(file: string): Database.Database {
  const conn = new Database(file, { readonly: true, fileMustExist: true });
  conn.pragma('busy_timeout = 5000');
  conn.pragma('cache_size = -256');
  conn.pragma('temp_store = FILE');
  conn.pragma('temp.cache_size = -256');
  conn.exec(`CREATE TABLE temp.summed (id INTEGER PRIMARY KEY, value TEXT NOT NULL);
             CREATE TABLE temp.ranked (neg INTEGER NOT NULL, id INTEGER NOT NULL, PRIMARY KEY (neg, id)) WITHOUT ROWID`);
  return conn;
}

/** One day's values in value order, a page at a time. */
interface DayCursor {
  readonly date: string;
  rows: ValueCount[];
  at: number;
  /** The last page was short: no rows after these. */
  last: boolean;
}

/** The exporter over the database file `db` is open on. */
export function createTopExporter(db: Db): TopExporter {
  async function* pages(
    site: number,
    dimension: Dimension,
    range: DayRange,
    query: TopPagesQuery,
  ): AsyncGenerator<TopChunk> {
    const c = exportConnection(db.name);
    try {
      const addValue = c.prepare<[number, string]>('INSERT INTO summed (id, value) VALUES (?, ?)');
      const addRank = c.prepare<[number, number]>('INSERT INTO ranked (neg, id) VALUES (?, ?)');
      const pending: ValueCount[] = [];
      let ids = 0;
      const flush = c.transaction(() => {
        for (const v of pending) {
          addValue.run(++ids, v.value);
          addRank.run(-v.count, ids);
        }
        pending.length = 0;
      });
      const base = {
        site,
        name: dimension,
        search: query.search === undefined || query.search === '' ? null : query.search,
      };
      const fill = (cursor: DayCursor) => {
        const after = cursor.rows[cursor.rows.length - 1];
        cursor.rows = dayValues(c, { ...base, date: cursor.date }, DAY_PAGE_ROWS, after?.value);
        cursor.at = 0;
        cursor.last = cursor.rows.length < DAY_PAGE_ROWS;
      };

      let slice = performance.now();
      const due = () => performance.now() - slice >= SLICE_MS;
      const pause = async () => {
        await nextTurn();
        slice = performance.now();
      };

      // A heap of the days by their next value, in SQLite's (UTF-8 byte) order.
      const heap: DayCursor[] = [];
      for (const date of daysBetween(range.from, range.to)) {
        const cursor: DayCursor = { date, rows: [], at: 0, last: false };
        fill(cursor);
        if (cursor.rows.length > 0) heap.push(cursor);
        if (due()) await pause();
        if (query.signal.aborted) return;
      }
      const head = (d: DayCursor) => d.rows[d.at]!.value;
      const less = (a: DayCursor, b: DayCursor) => utf8Compare(head(a), head(b)) < 0;
      const down = (from: number) => {
        for (let i = from; ;) {
          const l = 2 * i + 1;
          const r = l + 1;
          let m = i;
          if (l < heap.length && less(heap[l]!, heap[m]!)) m = l;
          if (r < heap.length && less(heap[r]!, heap[m]!)) m = r;
          if (m === i) return;
          [heap[i], heap[m]] = [heap[m]!, heap[i]!];
          i = m;
        }
      };
      for (let i = (heap.length >> 1) - 1; i >= 0; i--) down(i);

      let sum = 0;
      let current: ValueCount | undefined;
      while (heap.length > 0) {
        const day = heap[0]!;
        const row = day.rows[day.at++]!;
        sum += row.count;
        if (current?.value === row.value) current = { value: row.value, count: current.count + row.count };
        else {
          if (current) pending.push(current);
          current = row;
        }
        if (day.at === day.rows.length) {
          if (!day.last) fill(day);
          if (day.at === day.rows.length) {
            // Nothing more of this day: the last day of the heap takes its place.
            heap[0] = heap[heap.length - 1]!;
            heap.pop();
          }
        }
        down(0);
        if (pending.length >= BATCH_VALUES) flush();
        if (due()) {
          await pause();
          if (query.signal.aborted) return;
        }
      }
      if (current) pending.push(current);
      flush();

      const total = ids;
      const SELECT = `SELECT summed.value AS value, -ranked.neg AS count, ranked.neg AS neg, ranked.id AS id
         FROM ranked JOIN summed ON summed.id = ranked.id`;
      const first = c.prepare<Named, Ranked>(
        `${SELECT} ORDER BY ranked.neg, ranked.id LIMIT @limit OFFSET @offset`,
      );
      const next = c.prepare<Named, Ranked>(
        `${SELECT} WHERE (ranked.neg, ranked.id) > (@neg, @id) ORDER BY ranked.neg, ranked.id LIMIT @limit`,
      );
      const page = (limit: number, after?: { neg: number; id: number }) =>
        after === undefined
          ? first.all({ limit, offset: query.offset })
          : next.all({ limit, neg: after.neg, id: after.id });
      let after: Ranked | undefined;
      let left = query.offset < total ? Math.min(query.limit, total - query.offset) : 0;
      if (left === 0) yield { rows: [], total, sum };
      while (left > 0) {
        if (query.signal.aborted) return;
        const rows = page(Math.min(EXPORT_PAGE_ROWS, left), after);
        if (rows.length === 0) return;
        left -= rows.length;
        after = rows[rows.length - 1]!;
        yield { rows: rows.map((r) => ({ value: r.value, count: r.count })), total, sum };
      }
    } finally {
      c.close();
    }
  }

  return { pages };
}
