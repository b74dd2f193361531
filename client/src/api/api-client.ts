import { documentBase } from '../clock.js';
import type { RateLimitedFetch } from '../rate-limited-fetch.js';
import type { CallOptions } from './types.js';

/** A non-2xx answer of a typed call (after the 429 retries, if any, were spent). */
export class ApiError extends Error {
  constructor(
    readonly status: number,
    /** The parsed JSON body, or the text when it is not JSON. */
    readonly body: unknown,
    readonly response: Response,
  ) {
    super(`${response.url || 'request'} answered ${status}${errorCode(body)}`);
    this.name = 'ApiError';
  }
}

function errorCode(body: unknown): string {
  if (typeof body !== 'object' || body === null) return '';
  const error = (body as { error?: unknown }).error;
  if (typeof error === 'object' && error !== null && typeof (error as { code?: unknown }).code === 'string')
    return ` (${(error as { code: string }).code})`;
  const message = (body as { message?: unknown }).message;
  return typeof message === 'string' ? ` (${message})` : '';
}

export interface ApiClientOptions {
  /** The API's base URL, e.g. https://api.example.com (reports: the analyzer host); in a browser it may be relative to the page. */
  readonly baseUrl: string;
  /** Sent as `Authorization: Bearer …`: an API key, a visitor JWT or a workspace token. */
  readonly token?: string;
  /** The rate-limit-aware fetch, shared by every API of one client. */
  readonly http: RateLimitedFetch;
}

type Scalar = string | number | boolean | null | undefined;
type Params = Readonly<Record<string, Scalar>>;

export interface Send {
  readonly query?: object;
  readonly form?: object;
  readonly json?: unknown;
}

/** URLSearchParams of a flat object: undefined is left out, null sent empty (which clears a field). */
function searchParams(values: object): URLSearchParams {
  const out = new URLSearchParams();
  for (const [name, value] of Object.entries(values as Params)) {
    if (value === undefined) continue;
    out.append(name, value === null ? '' : String(value));
  }
  return out;
}

/** One API at one base URL: builds the request, sends it through the shared fetch, reads the answer. */
export class ApiClient {
  readonly #base: URL;
  constructor(protected readonly options: ApiClientOptions) {
    // A base with a path prefix keeps it: paths are appended, not resolved against the root.
    this.#base = new URL(
      options.baseUrl.endsWith('/') ? options.baseUrl : `${options.baseUrl}/`,
      documentBase(),
    );
  }

  protected async call<T>(method: string, path: string, send: Send = {}, call: CallOptions = {}): Promise<T> {
    const url = new URL(path.replace(/^\//, ''), this.#base);
    if (send.query) url.search = searchParams(send.query).toString();
    const headers = new Headers({ accept: 'application/json' });
    if (this.options.token !== undefined) headers.set('authorization', `Bearer ${this.options.token}`);
    let body: string | undefined;
    if (send.form) {
      headers.set('content-type', 'application/x-www-form-urlencoded');
      body = searchParams(send.form).toString();
    } else if (send.json !== undefined) {
      headers.set('content-type', 'application/json');
      body = JSON.stringify(send.json);
    }
    const init: RequestInit & { deadlineMs?: number } = { method, headers };
    if (body !== undefined) init.body = body;
    if (call.signal) init.signal = call.signal;
    if (call.deadlineMs !== undefined) init.deadlineMs = call.deadlineMs;
    const response = await this.options.http.fetch(url, init);
    const text = await response.text();
    let parsed: unknown = undefined;
    if (text !== '') {
      try {
        parsed = JSON.parse(text);
      } catch {
        parsed = text;
      }
    }
    if (!response.ok) throw new ApiError(response.status, parsed, response);
    return parsed as T;
  }
}

/**
 * A path segment from an id: encoded, so an id never changes the path. "", "." and ".." are
 * refused: the URL parser would drop or climb them (as it does "%2e"), turning DELETE
 * /websites/{id}/destroy into DELETE /destroy.
 */
export function segment(id: string | number): string {
  const text = String(id);
  if (text === '' || text === '.' || text === '..') throw new TypeError(`not an id: "${text}"`);
  return encodeURIComponent(text);
}
