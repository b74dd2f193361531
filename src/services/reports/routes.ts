import type { FastifyInstance, FastifyRequest } from 'fastify';
import { HttpError, NOT_FOUND } from '../kit/errors.js';
import { listAddress, listPage, pageNumber } from '../kit/pagination.js';
import { hashPassword } from '../accounts/passwords.js';
import { bodyFields, validate } from '../kit/validate.js';
import { analysePage } from './analyser.js';
import type { AnalysisPool } from './analysis-pool.js';
import type { PageFetcher } from './fetch-page.js';
import { reportRecord } from './record.js';
import type { Db } from '../../db/database.js';
import {
  deleteProject,
  deleteReport,
  findReport,
  insertReport,
  listProjects,
  listReports,
  updateReport,
  type ReportRow,
} from './store.js';
import { listQuery, PASSWORD_REQUIRED, projectsQuery, storeBody, updateBody } from './validation.js';

const notFound = () => new HttpError(404, NOT_FOUND, 'not_found');

/** The report `:id` names, if it is the caller's; another user's report is as unknown as a missing one. */
function ownReport(db: Db, request: FastifyRequest): ReportRow {
  const { id } = request.params as { id: string };
  const row = /^\d{1,15}$/.test(id) ? findReport(db, request.userId, Number(id)) : undefined;
  if (!row) throw notFound();
  return row;
}

/** The routes of the reports API (behind the API key hook); the list links start with `publicUrl`. */
export function registerRoutes(
  app: FastifyInstance,
  db: Db,
  fetcher: PageFetcher,
  pool: AnalysisPool,
  publicUrl: string,
): void {
  app.get('/api/v1/reports', async (request) => {
    const query = validate(listQuery, request.query);
    const page = pageNumber((request.query as Record<string, unknown>).page);
    const { rows, total } = listReports(db, request.userId, {
      search: query.search,
      project: query.project,
      result: query.result,
      sortBy: query.sort_by,
      sort: query.sort,
      limit: query.per_page,
      offset: (page - 1) * query.per_page,
    });
    const records = rows.map((row) => reportRecord(row, false));
    return listPage(listAddress(request, publicUrl), records, total, page, query.per_page, query.sort);
  });

  app.get('/api/v1/reports/:id', async (request) => ({
    data: reportRecord(ownReport(db, request), true),
    status: 200,
  }));

  app.post('/api/v1/reports', async (request, reply) => {
    const body = validate(storeBody, bodyFields(request.body));
    if (body.privacy === 2 && body.password === undefined)
      throw HttpError.field('password', PASSWORD_REQUIRED);
    const url = new URL(body.url.trim()).href;
    const analysis = await analysePage(fetcher, pool, url);
    const passwordHash = body.password === undefined ? null : await hashPassword(body.password);
    const row = insertReport(db, request.userId, {
      pageUrl: url,
      analysis,
      privacy: body.privacy,
      passwordHash,
    });
    void reply.status(201);
    return { data: reportRecord(row, true), status: 200 };
  });

  const update = async (request: FastifyRequest) => {
    const existing = ownReport(db, request);
    const body = validate(updateBody, bodyFields(request.body));
    const privacy = body.privacy ?? existing.privacy;
    if (privacy === 2 && body.password === undefined && existing.password_hash === null) {
      throw HttpError.field('password', PASSWORD_REQUIRED);
    }
    const analysis = body.results === 1 ? await analysePage(fetcher, pool, existing.page_url) : undefined;
    const passwordHash = body.password === undefined ? undefined : await hashPassword(body.password);
    const row = updateReport(db, request.userId, existing.id, {
      privacy: body.privacy,
      passwordHash,
      analysis,
    });
    // Deleted while the page was being analysed.
    if (!row) throw notFound();
    return { data: reportRecord(row, true), status: 200 };
  };
  app.put('/api/v1/reports/:id', update);
  app.patch('/api/v1/reports/:id', update);

  app.delete('/api/v1/reports/:id', async (request) => {
    const row = ownReport(db, request);
    if (!deleteReport(db, request.userId, row.id)) throw notFound();
    return { id: row.id, object: 'report', deleted: true, status: 200 };
  });

  app.get('/api/v1/projects', async (request) => {
    const query = validate(projectsQuery, request.query);
    const page = pageNumber((request.query as Record<string, unknown>).page);
    const { rows, total } = listProjects(db, request.userId, {
      search: query.search,
      sort: query.sort,
      limit: query.per_page,
      offset: (page - 1) * query.per_page,
    });
    return listPage(listAddress(request, publicUrl), rows, total, page, query.per_page, query.sort);
  });

  // A project is the caller's reports of one host: deleting it deletes them.
  app.delete('/api/v1/projects/:project', async (request) => {
    const { project } = request.params as { project: string };
    if (deleteProject(db, request.userId, project) === 0) throw notFound();
    return { id: project, object: 'project', deleted: true, status: 200 };
  });
}
