// Request and response types of one operation, picked out of the generated OpenAPI types.
import type { paths } from '../generated/openapi.js';

export type Path = keyof paths;
export type HttpMethod = 'get' | 'post' | 'put' | 'patch' | 'delete';
export type Operation<P extends Path, M extends HttpMethod> = NonNullable<paths[P][M]>;

type Content<R, Type extends string> = R extends { content: { [K in Type]: infer B } } ? B : undefined;
type SuccessStatus = 200 | 201 | 202 | 204;

/** The JSON body of the operation's 2xx response(s); undefined for a 204. */
export type Success<O> = O extends { responses: infer R }
  ? { [S in keyof R]: S extends SuccessStatus ? Content<R[S], 'application/json'> : never }[keyof R]
  : never;

/** The query parameters of the operation. */
export type Query<O> = O extends { parameters: { query?: infer Q } } ? NonNullable<Q> : never;

/** The form-encoded request body of the operation. */
export type FormBody<O> = O extends { requestBody?: infer B }
  ? Content<NonNullable<B>, 'application/x-www-form-urlencoded'>
  : never;

/** The JSON request body of the operation. */
export type JsonBody<O> = O extends { requestBody?: infer B }
  ? Content<NonNullable<B>, 'application/json'>
  : never;

/** Options of one typed call. */
export interface CallOptions {
  /** Cancels the request and any wait for the rate limit. */
  readonly signal?: AbortSignal;
  /** This call's overall bound on waits, in ms. */
  readonly deadlineMs?: number;
}
