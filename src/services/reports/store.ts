import type { Statement } from 'better-sqlite3';
import type { Db } from '../../db/database.js';
import type { Results } from './checks/types.js';
import type { ReportResult } from './score.js';
import { displayUrl, projectOf } from './url.js';
import { nowIso as now } from '../../db/timestamps.js';

export const SORT_KEYS = ['id', 'generated_at', 'url', 'result'] as const;
export type SortKey = (typeof SORT_KEYS)[number];
export type SortDirection = 'asc' | 'desc';

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
interface Filter {
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
interface ProjectFilter {
  readonly user: number;
  readonly search: string | null;
}

const PROJECT_FILTER = `
  WHERE user_id = @user AND (@search IS NULL OR instr(lower(project), lower(@search)) > 0)`;

/**
 * The reports table, every statement prepared once. Every query is scoped to its owner: a report
 * of another user is never read, changed or deleted.
 */
export class ReportStore {
  readonly #insert;
  readonly #find;
  readonly #update;
  readonly #delete;
  readonly #count;
  /** One statement per sort key and direction (ORDER BY cannot be a parameter); ties by id. */
  readonly #list = new Map<string, Statement<[Filter & { limit: number; offset: number }], ReportRow>>();
  readonly #projectCount;
  readonly #projects = new Map<
    SortDirection,
    Statement<[ProjectFilter & { limit: number; offset: number }], { project: string; reports: number }>
  >();
  readonly #deleteProject;

  constructor(private readonly db: Db) {
    this.#insert = db.prepare<[Omit<ReportRow, 'id'>], ReportRow>(`
      INSERT INTO reports (user_id, url, page_url, project, result, score, results, privacy, password_hash,
                           generated_at, created_at, updated_at)
      VALUES (@user_id, @url, @page_url, @project, @result, @score, @results, @privacy, @password_hash,
              @generated_at, @created_at, @updated_at)
      RETURNING *`);
    this.#find = db.prepare<[number, number], ReportRow>(
      'SELECT * FROM reports WHERE id = ? AND user_id = ?',
    );
    this.#update = db.prepare<[Omit<ReportRow, 'url' | 'page_url' | 'project' | 'created_at'>], ReportRow>(`
      UPDATE reports SET privacy = @privacy, password_hash = @password_hash, result = @result, score = @score,
                         results = @results, generated_at = @generated_at, updated_at = @updated_at
      WHERE id = @id AND user_id = @user_id
      RETURNING *`);
    this.#delete = db.prepare<[number, number]>('DELETE FROM reports WHERE id = ? AND user_id = ?');
    this.#count = db.prepare<[Filter], { n: number }>(`SELECT count(*) AS n FROM reports ${FILTER}`);
    for (const key of SORT_KEYS) {
      for (const dir of ['asc', 'desc'] as const) {
        const order = key === 'id' ? `id ${dir}` : `${key} ${dir}, id ${dir}`;
        this.#list.set(
          `${key} ${dir}`,
          db.prepare<[Filter & { limit: number; offset: number }], ReportRow>(
            `SELECT * FROM reports ${FILTER} ORDER BY ${order} LIMIT @limit OFFSET @offset`,
          ),
        );
      }
    }
    this.#projectCount = db.prepare<[ProjectFilter], { n: number }>(
      `SELECT count(DISTINCT project) AS n FROM reports ${PROJECT_FILTER}`,
    );
    for (const dir of ['asc', 'desc'] as const) {
      this.#projects.set(
        dir,
        db.prepare(
          `SELECT project, count(*) AS reports FROM reports ${PROJECT_FILTER}
           GROUP BY project ORDER BY project ${dir} LIMIT @limit OFFSET @offset`,
        ),
      );
    }
    this.#deleteProject = db.prepare<[number, string]>(
      'DELETE FROM reports WHERE user_id = ? AND project = ?',
    );
  }

  insert(userId: number, report: NewReport): ReportRow {
    const at = now();
    return this.#insert.get({
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

  find(userId: number, id: number): ReportRow | undefined {
    return this.#find.get(id, userId);
  }

  /** The updated row, or undefined when the user has no such report. */
  update(userId: number, id: number, changes: ReportChanges): ReportRow | undefined {
    const apply = this.db.transaction(() => {
      const row = this.find(userId, id);
      if (!row) return undefined;
      const at = now();
      const analysis = changes.analysis;
      return this.#update.get({
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

  delete(userId: number, id: number): boolean {
    return this.#delete.run(id, userId).changes > 0;
  }

  list(userId: number, query: ListQuery): { rows: ReportRow[]; total: number } {
    const filter: Filter = {
      user: userId,
      search: query.search ?? null,
      project: query.project ?? null,
      result: query.result ?? null,
    };
    const read = this.db.transaction(() => {
      const { n } = this.#count.get(filter)!;
      const statement = this.#list.get(`${query.sortBy} ${query.sort}`)!;
      // Past the last row the page is empty: no read, so no offset beyond SQLite's 64-bit integers.
      const rows =
        query.offset < n ? statement.all({ ...filter, limit: query.limit, offset: query.offset }) : [];
      return { rows, total: n };
    });
    return read();
  }

  /** A page of the user's projects (names holding `search`) with their report counts, by name. */
  projects(
    userId: number,
    query: { search?: string; sort: SortDirection; limit: number; offset: number },
  ): { rows: { project: string; reports: number }[]; total: number } {
    const filter: ProjectFilter = { user: userId, search: query.search ?? null };
    const read = this.db.transaction(() => {
      const { n } = this.#projectCount.get(filter)!;
      const statement = this.#projects.get(query.sort)!;
      const rows =
        query.offset < n ? statement.all({ ...filter, limit: query.limit, offset: query.offset }) : [];
      return { rows, total: n };
    });
    return read();
  }

  /** Deletes every report of the user's project; how many there were (0: no such project). */
  deleteProject(userId: number, project: string): number {
    return this.#deleteProject.run(userId, project).changes;
  }
}
