import formBody from '@fastify/formbody';
import Fastify, {
  LogController,
  type FastifyBaseLogger,
  type FastifyError,
  type FastifyInstance,
} from 'fastify';
import type { Logger } from 'pino';
import { HttpError, NOT_FOUND, type ErrorStyle } from './errors.js';

export interface AppOptions {
  readonly logger: Logger;
  readonly errors: ErrorStyle;
  /** Largest accepted request body, in bytes (413 beyond). */
  readonly bodyLimit: number;
}

/** The messages of fastify's own request errors (body parsing, size), in words a client can act on. */
const FASTIFY_ERRORS: Record<string, string> = {
  FST_ERR_CTP_BODY_TOO_LARGE: 'The request body is too large.',
  FST_ERR_CTP_INVALID_MEDIA_TYPE:
    'Unsupported Content-Type: send application/json or application/x-www-form-urlencoded.',
  FST_ERR_CTP_EMPTY_JSON_BODY: 'The JSON body is empty.',
  FST_ERR_CTP_INVALID_JSON_BODY: 'The JSON body is malformed.',
  FST_ERR_CTP_INVALID_CONTENT_LENGTH: 'Content-Length does not match the body.',
  // multipart/form-data (the websites and reports APIs, see input.ts).
  FST_FILES_LIMIT: 'File uploads are not accepted: send the form fields alone.',
  FST_FIELDS_LIMIT: 'The form has too many fields.',
  FST_PARTS_LIMIT: 'The form has too many parts.',
};

/**
 * A fastify app for one embedded service: JSON and form bodies, a body limit, and every error
 * (thrown HttpError, a body fastify could not parse, an unknown path, a bug) in the surface's shape.
 */
export function createServiceApp(options: AppOptions): FastifyInstance {
  const app = Fastify({
    loggerInstance: options.logger as FastifyBaseLogger,
    // The gateway logs every request; the service logs only failures.
    logController: new LogController({ disableRequestLogging: true }),
    bodyLimit: options.bodyLimit,
    // The gateway sets X-Request-Id; keep it in the service's logs.
    requestIdHeader: 'x-request-id',
    return503OnClosing: true,
  });
  void app.register(formBody, { bodyLimit: options.bodyLimit });
  app.setErrorHandler((err: FastifyError | HttpError, request, reply) => {
    let error: HttpError;
    if (err instanceof HttpError) error = err;
    else if ((err as { code?: string }).code === 'SQLITE_FULL') {
      request.log.error({ err }, 'database full: write refused');
      error = HttpError.storageFull();
    } else if (err.statusCode && err.statusCode < 500) {
      const message =
        FASTIFY_ERRORS[err.code] ??
        (err.code?.startsWith('FST_ERR_CTP') ? 'The request body is malformed.' : err.message);
      error = new HttpError(
        err.statusCode,
        message,
        err.statusCode === 413 ? 'payload_too_large' : 'bad_request',
      );
    } else {
      request.log.error({ err }, 'request failed');
      error = new HttpError(500, 'Server Error', 'internal_error');
    }
    if (error.headers) void reply.headers(error.headers);
    void reply.status(error.status).type('application/json').send(options.errors(error));
  });
  app.setNotFoundHandler((_request, reply) => {
    const error = new HttpError(404, NOT_FOUND, 'not_found');
    void reply.status(404).type('application/json').send(options.errors(error));
  });
  return app;
}

/** Listens on host:port (0: any free port) and returns the service's base URL. */
export async function listen(app: FastifyInstance, host: string, port: number): Promise<string> {
  await app.listen({ host, port });
  const address = app.server.address();
  if (!address || typeof address === 'string') throw new Error('service did not bind a TCP port');
  const shown = address.family === 'IPv6' ? `[${address.address}]` : address.address;
  return `http://${shown}:${address.port}`;
}
