import type { Db } from '../../db/database.js';
import { prepared } from '../../db/statements.js';
import type { WebsiteRow } from './record.js';
import { nowIso as now } from '../../db/timestamps.js';
import { userEmail } from '../accounts/accounts.js';
import { workspaceOwnerById } from '../accounts/workspaces.js';

/** The values a new website is stored with (already validated and normalised). */
export interface NewWebsite {
  readonly url: string;
  readonly privacy: number;
  readonly passwordHash: string | null;
  readonly email: number;
  readonly excludeBots: number;
  readonly excludeParams: string | null;
  readonly excludeIps: string | null;
}

/** An update: undefined leaves a field as it is; for the exclusion lists, null clears them. */
export interface WebsiteChanges {
  readonly privacy?: number;
  readonly passwordHash?: string;
  readonly email?: number;
  readonly excludeBots?: number;
  readonly excludeParams?: string | null;
  readonly excludeIps?: string | null;
}

export interface ListQuery {
  /** Lower-case substring of the host; undefined: no filter. */
  readonly search?: string;
  /** The search's punycode form (normalize.ts asciiSearch), matched besides it; undefined: none. */
  readonly searchAscii?: string;
  readonly sort: 'asc' | 'desc';
  readonly limit: number;
  readonly offset: number;
}

/** One page of the owner's list and the number of matching websites, read together. */
export interface ListResult {
  readonly total: number;
  readonly rows: WebsiteRow[];
}

type Named = Record<string, unknown>;

/**
 * The list's filter: the owner's sites whose host contains @search or its punycode form @ascii
 * (instr: no LIKE wildcards to escape).
 */
const LIST_WHERE =
  'user_id = @user AND (@search IS NULL OR instr(url, @search) > 0 OR (@ascii IS NOT NULL AND instr(url, @ascii) > 0))';

/**
 * Data access for websites, every query scoped to its owner. Statements are prepared once, when
 * the service starts.
 */
export class WebsiteData {
  readonly #find;
  readonly #hostTaken;
  readonly #insert;
  readonly #update;
  readonly #delete;
  readonly #count;
  readonly #page;
  readonly #list: (user: number, query: ListQuery) => ListResult;

  constructor(db: Db) {
    this.#find = db.prepare<[number, number], WebsiteRow>(
      'SELECT * FROM websites WHERE id = ? AND user_id = ?',
    );
    this.#hostTaken = db.prepare<[number, string], { taken: 1 }>(
      'SELECT 1 AS taken FROM websites WHERE user_id = ? AND url = ?',
    );
    this.#insert = db.prepare<Named, WebsiteRow>(
      `INSERT INTO websites (user_id, url, privacy, password_hash, email, exclude_bots,
         exclude_params, exclude_ips, created_at, updated_at)
       VALUES (@user, @url, @privacy, @passwordHash, @email, @excludeBots,
         @excludeParams, @excludeIps, @now, @now)
       RETURNING *`,
    );
    // One statement for every update: a field not given keeps its stored value, so concurrent
    // updates of different fields do not undo each other. updated_at moves only when a value
    // does (a PATCH with only url=, which is never changed, or the same values, leaves it).
    this.#update = db.prepare<Named, WebsiteRow>(
      `UPDATE websites SET
         privacy = coalesce(@privacy, privacy),
         password_hash = coalesce(@passwordHash, password_hash),
         email = coalesce(@email, email),
         exclude_bots = coalesce(@excludeBots, exclude_bots),
         exclude_params = CASE WHEN @setParams THEN @excludeParams ELSE exclude_params END,
         exclude_ips = CASE WHEN @setIps THEN @excludeIps ELSE exclude_ips END,
         updated_at = CASE WHEN coalesce(@privacy, privacy) IS NOT privacy
             OR coalesce(@passwordHash, password_hash) IS NOT password_hash
             OR coalesce(@email, email) IS NOT email
             OR coalesce(@excludeBots, exclude_bots) IS NOT exclude_bots
             OR (@setParams AND @excludeParams IS NOT exclude_params)
             OR (@setIps AND @excludeIps IS NOT exclude_ips)
           THEN @now ELSE updated_at END
       WHERE id = @id AND user_id = @user
       RETURNING *`,
    );
    this.#delete = db.prepare<[number, number]>('DELETE FROM websites WHERE id = ? AND user_id = ?');
    this.#count = db.prepare<Named, { n: number }>(`SELECT count(*) AS n FROM websites WHERE ${LIST_WHERE}`);
    // The sort direction cannot be a parameter: one statement per direction. Ties (none within
    // one owner, whose hosts are unique) fall back to the id, so pages are stable.
    const page = (direction: 'ASC' | 'DESC') =>
      db.prepare<Named, WebsiteRow>(
        `SELECT * FROM websites WHERE ${LIST_WHERE} ORDER BY url ${direction}, id ASC LIMIT @limit OFFSET @offset`,
      );
    this.#page = { asc: page('ASC'), desc: page('DESC') };
    // The count and the page in one read transaction: one snapshot of the table (WAL), so the total
    // agrees with the rows while other processes write.
    this.#list = db.transaction((user: number, query: ListQuery): ListResult => {
      const filter = { user, search: query.search ?? null, ascii: query.searchAscii ?? null };
      const total = this.#count.get(filter)!.n;
      // Past the last page there is nothing to read (and a huge page would overflow OFFSET).
      const rows =
        query.offset < total
          ? this.#page[query.sort].all({ ...filter, limit: query.limit, offset: query.offset })
          : [];
      return { total, rows };
    });
  }

  find(user: number, id: number): WebsiteRow | undefined {
    return this.#find.get(id, user);
  }

  hostTaken(user: number, url: string): boolean {
    return this.#hostTaken.get(user, url) !== undefined;
  }

  /** Inserts the website; undefined when the owner already has this host (the UNIQUE constraint). */
  insert(user: number, site: NewWebsite): WebsiteRow | undefined {
    try {
      return this.#insert.get({ user, ...site, now: now() });
    } catch (err) {
      if ((err as { code?: string }).code === 'SQLITE_CONSTRAINT_UNIQUE') return undefined;
      throw err;
    }
  }

  /** Applies the changes; undefined when the owner has no such website. */
  update(user: number, id: number, changes: WebsiteChanges): WebsiteRow | undefined {
    return this.#update.get({
      id,
      user,
      privacy: changes.privacy ?? null,
      passwordHash: changes.passwordHash ?? null,
      email: changes.email ?? null,
      excludeBots: changes.excludeBots ?? null,
      setParams: changes.excludeParams === undefined ? 0 : 1,
      excludeParams: changes.excludeParams ?? null,
      setIps: changes.excludeIps === undefined ? 0 : 1,
      excludeIps: changes.excludeIps ?? null,
      now: now(),
    });
  }

  /** Deletes the website; false when the owner has no such website. */
  delete(user: number, id: number): boolean {
    return this.#delete.run(id, user).changes === 1;
  }

  /** The total of the owner's matching websites and one page of them, from one snapshot. */
  list(user: number, query: ListQuery): ListResult {
    return this.#list(user, query);
  }
}

// The reads of the other parts of the services (the collector, the statistics API and pages, the
// e-mail reports, the widget): this file is the only one with SQL on the websites table.

/** What the collector needs of a tracked website: its id and its exclusions. */
export type TrackedWebsiteRow = Pick<
  WebsiteRow,
  'id' | 'url' | 'exclude_bots' | 'exclude_params' | 'exclude_ips'
>;

/** The website a collected hit belongs to: of a host registered by several owners, the oldest. */
export function trackedWebsite(db: Db, host: string): TrackedWebsiteRow | undefined {
  return prepared<[string], TrackedWebsiteRow>(
    db,
    'SELECT id, url, exclude_bots, exclude_params, exclude_ips FROM websites WHERE url = ? ORDER BY id LIMIT 1',
  ).get(host);
}

/** Whether website `id` is `user`'s. */
export function ownsWebsite(db: Db, user: number, id: number): boolean {
  return (
    prepared<[number, number], { id: number }>(
      db,
      'SELECT id FROM websites WHERE id = ? AND user_id = ?',
    ).get(id, user) !== undefined
  );
}

/** Hosts are unique per owner only: the viewer's own website first, else the oldest registration. */
export function websiteByHost(db: Db, host: string, viewer: number): WebsiteRow | undefined {
  return prepared<[string, number], WebsiteRow>(
    db,
    'SELECT * FROM websites WHERE url = ? ORDER BY user_id = ? DESC, id ASC LIMIT 1',
  ).get(host, viewer);
}

/** The owner's websites by host, for the pages' list. */
export function ownSites(db: Db, user: number): { url: string; privacy: number }[] {
  return prepared<[number], { url: string; privacy: number }>(
    db,
    'SELECT url, privacy FROM websites WHERE user_id = ? ORDER BY url',
  ).all(user);
}

/** Whether website `website` belongs to the owner of workspace `workspace` (none without an owner). */
export function isWorkspaceOwnersWebsite(db: Db, website: number, workspace: number): boolean {
  const owner = workspaceOwnerById(db, workspace);
  return (
    owner !== undefined &&
    prepared<[number, number], { one: number }>(
      db,
      'SELECT 1 AS one FROM websites WHERE id = ? AND user_id = ?',
    ).get(website, owner) !== undefined
  );
}

/** A website whose owner asked for e-mail reports, with the owner's address. */
export interface EmailReportDue {
  readonly id: number;
  readonly url: string;
  readonly email: string;
}

/**
 * The websites with e-mail reports on and an owner's address, by id (the sender leaves out those
 * whose period report_sends has settled).
 */
export function emailReportRecipients(db: Db): EmailReportDue[] {
  const sites = prepared<[], { id: number; url: string; user_id: number }>(
    db,
    'SELECT id, url, user_id FROM websites WHERE email = 1 ORDER BY id',
  ).all();
  // The owner's address comes from the accounts' repository; a website whose owner has none is skipped.
  return sites.flatMap(({ id, url, user_id }) => {
    const email = userEmail(db, user_id);
    return email === null ? [] : [{ id, url, email }];
  });
}
