import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { Db } from '../../db/database.js';
import { latestReports, reportById, type ReportRow } from './store.js';
import { PAGE_ROUTE } from '../pages/assets.js';
import { pageAccess, type Guarded } from '../pages/access.js';
import { notFoundPage, passwordPage, sendPage } from '../pages/layout.js';
import { reportListPage, reportPage } from './report-view.js';
import { checkOrigin, type PageSessions } from '../pages/session.js';

/**
 * The report pages on the analyzer host: /{id}, the owner's list at /, and the password form's
 * POST /_/unlock/{id}. A path that is not a report id stays the API's JSON 404.
 */

type PageRequest = FastifyRequest<{ Params: { id: string }; Body: Record<string, unknown> | undefined }>;

const guarded = (row: ReportRow): Guarded => ({
  id: row.id,
  userId: row.user_id,
  privacy: row.privacy,
  passwordHash: row.password_hash,
});

/** The owner's list shows at most this many reports, newest first. */
const LIST_LIMIT = 500;

export function registerReportPages(app: FastifyInstance, db: Db, sessions: PageSessions): void {
  const find = (id: string) => (/^\d{1,15}$/.test(id) ? reportById(db, Number(id)) : undefined);
  const notFound = (request: FastifyRequest, reply: FastifyReply, viewer: number | undefined) =>
    sendPage(reply, 404, notFoundPage(viewer !== undefined, request.url));

  app.get('/', PAGE_ROUTE, async (request, reply) => {
    const viewer = sessions.viewer(request);
    if (viewer === undefined) return reply.redirect('/_/login?next=%2F', 303);
    return sendPage(reply, 200, reportListPage(latestReports(db, viewer, LIST_LIMIT), '/'));
  });

  app.get('/:id', PAGE_ROUTE, async (request: PageRequest, reply) => {
    if (!/^\d+$/.test(request.params.id)) return reply.callNotFound();
    const viewer = sessions.viewer(request);
    const row = find(request.params.id);
    if (!row) return notFound(request, reply, viewer);
    const access = pageAccess(guarded(row), viewer, sessions.unlocked(request, 'r', guarded(row)));
    if (access === 'hidden') return notFound(request, reply, viewer);
    if (access === 'password') {
      return sendPage(
        reply,
        200,
        passwordPage(`Report ${row.id}`, `/_/unlock/${row.id}`, viewer !== undefined, request.url),
      );
    }
    return sendPage(reply, 200, reportPage(row, viewer !== undefined, request.url));
  });

  app.post('/_/unlock/:id', PAGE_ROUTE, async (request: PageRequest, reply) => {
    if (!checkOrigin(request, reply)) return reply;
    const viewer = sessions.viewer(request);
    const row = find(request.params.id);
    const page = row && guarded(row);
    if (!page || pageAccess(page, viewer, false) !== 'password') return notFound(request, reply, viewer);
    const password = request.body?.password;
    if (typeof password !== 'string' || !(await sessions.checkPassword(password, page))) {
      return sendPage(
        reply,
        401,
        passwordPage(
          `Report ${page.id}`,
          `/_/unlock/${page.id}`,
          viewer !== undefined,
          `/${page.id}`,
          'Wrong password.',
        ),
      );
    }
    sessions.unlock(request, reply, 'r', page, `/${page.id}`);
    return reply.redirect(`/${page.id}`, 303);
  });
}
