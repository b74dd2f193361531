import type { Db } from '../../db/database.js';
import { prepared } from '../../db/statements.js';
import type { Results } from './checks/types.js';
import type { ReportResult } from './score.js';
import { displayUrl, projectOf } from './url.js';
import { nowIso as now } from '../../db/timestamps.js';

export const SORT_KEYS = ['id', 'generated_at', 'url', 'result'] as const;
export type SortKey = (typeof SORT_KEYS)[number];
export type SortDirection = 'asc' | 'desc';
const DIRECTIONS: readonly SortDirection[] = ['asc', 'desc'];

export interface ReportRow {
  id: number;
  user_id: number;
  url: string;
  page_url: string;
  project: string;
  result: ReportResult;
  score: number;
  /** JSON text. */
  results: string;
  privacy: number;
  password_hash: string | null;
  generated_at: string;
  created_at: string;
  updated_at: string;
}

/** A finished analysis, as stored. */
export interface Analysis {
  readonly result: ReportResult;
  readonly score: number;
  readonly results: Results;
  /** ISO-8601; defaults to now. */
  readonly generatedAt?: string;
}

export interface NewReport {
  /** The full URL as given; `url` and `project` are derived from it. */
  readonly pageUrl: string;
  readonly analysis: Analysis;
  readonly privacy: number;
  readonly passwordHash: string | null;
}

export interface ReportChanges {
  readonly privacy?: number;
  readonly passwordHash?: string;
  readonly analysis?: Analysis;
}

export interface ListQuery {
  readonly search?: string;
  readonly project?: string;
  readonly result?: ReportResult;
  readonly sortBy: SortKey;
  readonly sort: SortDirection;
  readonly limit: number;
  readonly offset: number;
}

/** The list filter's parameters (null: not filtered by it). */
interface Filter extends Record<string, unknown> {
  readonly user: number;
  readonly search: string | null;
  readonly project: string | null;
  readonly result: ReportResult | null;
}

const FILTER = `
  WHERE user_id = @user
    AND (@search IS NULL OR instr(lower(url), lower(@search)) > 0)
    AND (@project IS NULL OR project = @project)
    AND (@result IS NULL OR result = @result)`;

/** The projects list's filter (null: every project). */
interface ProjectFilter extends Record<string, unknown> {
  readonly user: number;
  readonly search: string | null;
}

const PROJECT_FILTER = `
  WHERE user_id = @user AND (@search IS NULL OR instr(lower(project), lower(@search)) > 0)`;

/**
 * The reports table's one repository: the only module with SQL on it. Statements are prepared on
 * first use and reused (prepared()). Every query of the API is scoped to its owner: a report of
 * another user is never read, changed or deleted; the report pages read by id alone and apply the
 * page's privacy themselves.
 */

type Paged<F> = F & { limit: number; offset: number };

export function insertReport(db: Db, userId: number, report: NewReport): ReportRow {
  const at = now();
  return prepared<[Omit<ReportRow, 'id'>], ReportRow>(
    db,
    `INSERT INTO reports (user_id, url, page_url, project, result, score, results, privacy, password_hash,
                         generated_at, created_at, updated_at)
     VALUES (@user_id, @url, @page_url, @project, @result, @score, @results, @privacy, @password_hash,
             @generated_at, @created_at, @updated_at)
     RETURNING *`,
  ).get({
    user_id: userId,
    url: displayUrl(report.pageUrl),
    page_url: report.pageUrl,
    project: projectOf(report.pageUrl),
    result: report.analysis.result,
    score: report.analysis.score,
    results: JSON.stringify(report.analysis.results),
    privacy: report.privacy,
    password_hash: report.passwordHash,
    generated_at: report.analysis.generatedAt ?? at,
    created_at: at,
    updated_at: at,
  })!;
}

export function findReport(db: Db, userId: number, id: number): ReportRow | undefined {
  return prepared<[number, number], ReportRow>(db, 'SELECT * FROM reports WHERE id = ? AND user_id = ?').get(
    id,
    userId,
  );
}

/** Any user's report, for the report pages (which apply its privacy). */
export function reportById(db: Db, id: number): ReportRow | undefined {
  return prepared<[number], ReportRow>(db, 'SELECT * FROM reports WHERE id = ?').get(id);
}

/** The user's newest reports, at most `limit`. */
export function latestReports(db: Db, userId: number, limit: number): ReportRow[] {
  return prepared<[number, number], ReportRow>(
    db,
    'SELECT * FROM reports WHERE user_id = ? ORDER BY id DESC LIMIT ?',
  ).all(userId, limit);
}

/** The updated row, or undefined when the user has no such report. */
export function updateReport(
  db: Db,
  userId: number,
  id: number,
  changes: ReportChanges,
): ReportRow | undefined {
  const apply = db.transaction(() => {
    const row = findReport(db, userId, id);
    if (!row) return undefined;
    const at = now();
    const analysis = changes.analysis;
    return prepared<[Omit<ReportRow, 'url' | 'page_url' | 'project' | 'created_at'>], ReportRow>(
      db,
      `UPDATE reports SET privacy = @privacy, password_hash = @password_hash, result = @result, score = @score,
                         results = @results, generated_at = @generated_at, updated_at = @updated_at
       WHERE id = @id AND user_id = @user_id
       RETURNING *`,
    ).get({
      id,
      user_id: userId,
      privacy: changes.privacy ?? row.privacy,
      password_hash: changes.passwordHash ?? row.password_hash,
      result: analysis?.result ?? row.result,
      score: analysis?.score ?? row.score,
      results: analysis ? JSON.stringify(analysis.results) : row.results,
      generated_at: analysis ? (analysis.generatedAt ?? at) : row.generated_at,
      updated_at: at,
    })!;
  });
  return apply.immediate();
}

export function deleteReport(db: Db, userId: number, id: number): boolean {
  return (
    prepared<[number, number]>(db, 'DELETE FROM reports WHERE id = ? AND user_id = ?').run(id, userId)
      .changes > 0
  );
}

export function listReports(db: Db, userId: number, query: ListQuery): { rows: ReportRow[]; total: number } {
  const filter: Filter = {
    user: userId,
    search: query.search ?? null,
    project: query.project ?? null,
    result: query.result ?? null,
  };
  // ORDER BY cannot be a parameter: one statement per sort key and direction; ties by id.
  if (!SORT_KEYS.includes(query.sortBy) || !DIRECTIONS.includes(query.sort)) throw new Error('bad sort');
  const order =
    query.sortBy === 'id' ? `id ${query.sort}` : `${query.sortBy} ${query.sort}, id ${query.sort}`;
  const read = db.transaction(() => {
    const { n } = prepared<[Filter], { n: number }>(db, `SELECT count(*) AS n FROM reports ${FILTER}`).get(
      filter,
    )!;
    // Past the last row the page is empty: no read, so no offset beyond SQLite's 64-bit integers.
    const rows =
      query.offset < n
        ? prepared<[Paged<Filter>], ReportRow>(
            db,
            `SELECT * FROM reports ${FILTER} ORDER BY ${order} LIMIT @limit OFFSET @offset`,
          ).all({ ...filter, limit: query.limit, offset: query.offset })
        : [];
    return { rows, total: n };
  });
  return read();
}

/** A page of the user's projects (names holding `search`) with their report counts, by name. */
export function listProjects(
  db: Db,
  userId: number,
  query: { search?: string; sort: SortDirection; limit: number; offset: number },
): { rows: { project: string; reports: number }[]; total: number } {
  const filter: ProjectFilter = { user: userId, search: query.search ?? null };
  if (!DIRECTIONS.includes(query.sort)) throw new Error('bad sort');
  const read = db.transaction(() => {
    const { n } = prepared<[ProjectFilter], { n: number }>(
      db,
      `SELECT count(DISTINCT project) AS n FROM reports ${PROJECT_FILTER}`,
    ).get(filter)!;
    const rows =
      query.offset < n
        ? prepared<[Paged<ProjectFilter>], { project: string; reports: number }>(
            db,
            `SELECT project, count(*) AS reports FROM reports ${PROJECT_FILTER}
             GROUP BY project ORDER BY project ${query.sort} LIMIT @limit OFFSET @offset`,
          ).all({ ...filter, limit: query.limit, offset: query.offset })
        : [];
    return { rows, total: n };
  });
  return read();
}

/** Deletes every report of the user's project; how many there were (0: no such project). */
export function deleteProject(db: Db, userId: number, project: string): number {
  return prepared<[number, string]>(db, 'DELETE FROM reports WHERE user_id = ? AND project = ?').run(
    userId,
    project,
  ).changes;
}
