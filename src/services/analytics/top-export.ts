import { setImmediate as nextTurn } from 'node:timers/promises';
import Database from 'better-sqlite3';
import type { Db } from '../../db/database.js';
import type { DayRange, Dimension, ValueCount } from './stats-source.js';

/**
 * A dimension's values over a range, highest count first (ties by value), read in short
 * statements so that no export holds the event loop, a statement or a read snapshot for long:
 *
 * 1. the range's `stats` rows are read in primary-key order (keyset pages of `pageRows`) and summed
 *    per value into a TEMP table of a connection of the export's own, on disk (TEMP_STORE file), so
 *    the memory used does not grow with the number of values; the summing yields every few ms;
 * 2. the summed values are read back in keyset pages on an index of (−count, value).
 *
 * Between pages the generator yields to the event loop. The rows are not one snapshot: a visit
 * recorded meanwhile may or may not be counted, but every value appears once and the sum is of
 * the rows read, so the shares add up.
 */

export interface TopExportQuery {
  readonly search?: string;
  /** The most values exported. */
  readonly limit: number;
  /** Ends the export early (the client went away). */
  readonly signal: AbortSignal;
}

/** One page of the export, with the sum of every matching count (for shares). */
export interface TopExportPage {
  readonly rows: readonly ValueCount[];
  readonly sum: number;
}

export interface TopExporter {
  pages(
    site: number,
    dimension: Dimension,
    range: DayRange,
    query: TopExportQuery,
  ): AsyncGenerator<TopExportPage>;
}

/** Rows per statement: well under a millisecond of SQLite work each. */
export const EXPORT_PAGE_ROWS = 256;
/** The longest the summing holds the event loop before it yields. */
const SLICE_MS = 4;
/** Rows summed per transaction, between checks of the slice's time. */
const BATCH_ROWS = 32;

interface StatsRow {
  date: string;
  value: string;
  count: number;
}

type Named = Record<string, unknown>;

const FILTER = `website_id = @site AND name = @name AND date <= @to
  AND (@search IS NULL OR instr(lower(value), lower(@search)) > 0)`;

/**
 * A connection of one export's own on the database file: read-only, small caches, its TEMP table
 * on disk; closing it discards the table at once (no DROP of a large table on the event loop).
 */
function exportConnection(file: string): Database.Database {
  const conn = new Database(file, { readonly: true, fileMustExist: true });
  conn.pragma('busy_timeout = 5000');
  conn.pragma('cache_size = -1024');
  conn.pragma('temp_store = FILE');
  conn.pragma('temp.cache_size = -1024');
  conn.exec(`CREATE TABLE temp.summed (value TEXT PRIMARY KEY, neg INTEGER NOT NULL) WITHOUT ROWID;
             CREATE INDEX temp.summed_order ON summed (neg, value)`);
  return conn;
}

/** The exporter over the database file `db` is open on. */
export function createTopExporter(db: Db, pageRows = EXPORT_PAGE_ROWS): TopExporter {
  async function* pages(
    site: number,
    dimension: Dimension,
    range: DayRange,
    query: TopExportQuery,
  ): AsyncGenerator<TopExportPage> {
    const c = exportConnection(db.name);
    try {
      const first = c.prepare<Named, StatsRow>(
        `SELECT date, value, count FROM stats WHERE (date, value) >= (@date, @value) AND ${FILTER}
         ORDER BY date, value LIMIT @limit`,
      );
      const next = c.prepare<Named, StatsRow>(
        `SELECT date, value, count FROM stats WHERE (date, value) > (@date, @value) AND ${FILTER}
         ORDER BY date, value LIMIT @limit`,
      );
      const add = c.prepare<[string, number]>(
        `INSERT INTO summed (value, neg) VALUES (?, ?) ON CONFLICT (value) DO UPDATE SET neg = neg + excluded.neg`,
      );
      const addAll = c.transaction((rows: readonly StatsRow[]) => {
        for (const r of rows) add.run(r.value, -r.count);
      });
      const params = {
        site,
        name: dimension,
        to: range.to,
        search: query.search === undefined || query.search === '' ? null : query.search,
        limit: pageRows,
        date: range.from,
        value: '',
      };
      let slice = performance.now();
      const yieldWhenDue = async () => {
        if (performance.now() - slice < SLICE_MS) return;
        await nextTurn();
        slice = performance.now();
      };
      let sum = 0;
      for (let statement = first; ; statement = next) {
        if (query.signal.aborted) return;
        const rows = statement.all(params);
        for (let i = 0; i < rows.length; i += BATCH_ROWS) {
          addAll(rows.slice(i, i + BATCH_ROWS));
          await yieldWhenDue();
          if (query.signal.aborted) return;
        }
        for (const r of rows) sum += r.count;
        if (rows.length < pageRows) break;
        params.date = rows[rows.length - 1]!.date;
        params.value = rows[rows.length - 1]!.value;
      }

      const read = c.prepare<Named, ValueCount>(
        `SELECT value, -neg AS count FROM summed WHERE (neg, value) > (@neg, @value)
         ORDER BY neg, value LIMIT @limit`,
      );
      const after = { neg: -Infinity, value: '', limit: 0 };
      for (let left = query.limit; left > 0; left -= after.limit) {
        if (query.signal.aborted) return;
        after.limit = Math.min(pageRows, left);
        const rows = read.all(after);
        if (rows.length > 0) yield { rows, sum };
        if (rows.length < after.limit) return;
        after.neg = -rows[rows.length - 1]!.count;
        after.value = rows[rows.length - 1]!.value;
      }
    } finally {
      c.close();
    }
  }

  return { pages };
}
