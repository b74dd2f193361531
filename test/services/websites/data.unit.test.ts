import { afterEach, describe, expect, test } from 'vitest';
import { openDatabase, type Db } from '../../../src/db/database.js';
import { WebsiteData, type NewWebsite } from '../../../src/services/websites/data.js';
import { newDataDir } from '../../helpers/embedded.js';

/** The websites' data access on a real database file, with a second connection writing beside it. */

const opened: Db[] = [];
const open = (dir: string): Db => {
  const db = openDatabase(dir);
  opened.push(db);
  return db;
};
afterEach(() => {
  for (const db of opened.splice(0)) db.close();
});

const site = (url: string): NewWebsite => ({
  url,
  privacy: 1,
  passwordHash: null,
  email: 0,
  excludeBots: 1,
  excludeParams: null,
  excludeIps: null,
});

/**
 * The database as WebsiteData sees it, except that `afterCount` runs right after each count of the
 * list (between the list's two reads).
 */
function withHook(db: Db, afterCount: () => void): Db {
  return new Proxy(db, {
    get(target, prop) {
      if (prop === 'prepare') {
        return (sql: string) => {
          const statement = target.prepare(sql);
          if (!sql.startsWith('SELECT count(*)')) return statement;
          const get = statement.get.bind(statement);
          return Object.assign(statement, {
            get: (...args: unknown[]) => {
              const row = get(...(args as [Record<string, unknown>]));
              afterCount();
              return row;
            },
          });
        };
      }
      const value = Reflect.get(target, prop, target) as unknown;
      return typeof value === 'function' ? (value as (...a: unknown[]) => unknown).bind(target) : value;
    },
  });
}

describe('the list', () => {
  test('total and rows come from one snapshot while another connection writes', () => {
    const dir = newDataDir();
    const db = open(dir);
    const other = open(dir);
    db.prepare("INSERT INTO users (id, name, created_at) VALUES (1, 'alice', '2024-01-01')").run();
    const writer = new WebsiteData(other);
    let written = 0;
    // Another process stores a site (sorting first) between the count and the page.
    const data = new WebsiteData(withHook(db, () => writer.insert(1, site(`a${++written}.example`))));
    for (const url of ['m.example', 'n.example', 'o.example']) data.insert(1, site(url));

    const first = data.list(1, { sort: 'asc', limit: 100, offset: 0 });
    expect(written).toBe(1);
    expect(first.total).toBe(3);
    expect(first.rows.map((r) => r.url)).toEqual(['m.example', 'n.example', 'o.example']);

    // The next read sees the write.
    const second = data.list(1, { sort: 'asc', limit: 100, offset: 0 });
    expect(second.total).toBe(4);
    expect(second.rows.map((r) => r.url)).toEqual(['a1.example', 'm.example', 'n.example', 'o.example']);
  });

  test('the search matches the raw term or its punycode form', () => {
    const db = open(newDataDir());
    db.prepare("INSERT INTO users (id, name, created_at) VALUES (1, 'alice', '2024-01-01')").run();
    const data = new WebsiteData(db);
    for (const url of ['xn--bcher-kva.de', 'buecher.de', 'other.example']) data.insert(1, site(url));
    const urls = (search?: string, searchAscii?: string) =>
      data.list(1, { search, searchAscii, sort: 'asc', limit: 100, offset: 0 }).rows.map((r) => r.url);
    expect(urls('bücher', 'xn--bcher-kva')).toEqual(['xn--bcher-kva.de']);
    expect(urls('.de', undefined)).toEqual(['buecher.de', 'xn--bcher-kva.de']);
    expect(urls('büch', 'xn--bch-hoa')).toEqual([]);
    expect(urls(undefined, undefined)).toHaveLength(3);
  });
});
