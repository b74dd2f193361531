import type { ServerResponse } from 'node:http';
import type { Refusal } from '../limits/refusal.js';
import type { CompiledLimiter } from '../rules/model.js';
import { closesAfterAnswer } from './lingering-close.js';

/** The one JSON error shape of the gateway's own responses: {"error":{"code","message"}}. */
export function errorBody(code: string, message: string): string {
  return JSON.stringify({ error: { code, message } });
}

export function sendJson(
  res: ServerResponse,
  status: number,
  body: string,
  headers: Record<string, string> = {},
): void {
  writeJson(res, status, body, String(Buffer.byteLength(body)), { ...headers }, 'application/json', 'utf8');
}

/** Writes a JSON response with `headers` (added to, not copied); a response already started is cut. */
function writeJson(
  res: ServerResponse,
  status: number,
  body: string,
  length: string,
  headers: Record<string, string>,
  type: string,
  encoding: BufferEncoding,
): void {
  if (res.headersSent) {
    res.destroy();
    return;
  }
  headers['content-type'] = type;
  headers['content-length'] = length;
  // An answer before the body arrived closes the connection, lingering (see lingering-close.ts).
  if (closesAfterAnswer(res, headers['connection'] === 'close')) headers['connection'] = 'close';
  res.writeHead(status, headers);
  res.end(body, encoding);
}

export function sendError(
  res: ServerResponse,
  status: number,
  code: string,
  message: string,
  headers?: Record<string, string>,
): void {
  sendJson(res, status, errorBody(code, message), headers);
}

/** A JSON body built once, with its Content-Length and the encoding it is written in. */
interface PreparedBody {
  readonly text: string;
  readonly length: string;
  /**
   * latin1 when the text is ASCII (the same bytes): Node writes the response's head and body,
   * joined in one string, in the body's encoding, and latin1 copies it byte for byte where UTF-8
   * would first flatten and encode it (the head is latin1 too, as Node writes a head alone).
   */
  readonly encoding: BufferEncoding;
}

function prepared(text: string): PreparedBody {
  const bytes = Buffer.byteLength(text);
  // As many UTF-8 bytes as UTF-16 units: every character is ASCII.
  return { text, length: String(bytes), encoding: bytes === text.length ? 'latin1' : 'utf8' };
}

/** Each limiter's 429 body, built at its first refusal; a reload's new limiters get their own. */
const refusalBodies = new WeakMap<CompiledLimiter, PreparedBody>();
/** A `limitedBody: problem` limiter's bodies, one per set of violated policies. */
const problemBodies = new WeakMap<CompiledLimiter, Map<string, PreparedBody>>();

/** The problem type of draft-ietf-httpapi-ratelimit-headers (section 6.1). */
export const QUOTA_EXCEEDED = 'https://iana.org/assignments/http-problem-types#quota-exceeded';

/** A 429 as application/problem+json (RFC 9457) of the draft's quota-exceeded type. */
export function problemBody(message: string, violatedPolicies: readonly string[]): string {
  return JSON.stringify({
    type: QUOTA_EXCEEDED,
    title: 'Request cannot be satisfied as assigned quota has been exceeded',
    status: 429,
    detail: message,
    'violated-policies': violatedPolicies,
  });
}

/**
 * The 429 of a limiter: the same status, headers (in the same order) and body as
 * sendError(res, 429, 'rate_limited', limiter.message, headers), without building the body per
 * request or copying the headers. `headers` is the request's own object: its Content-Type and
 * Content-Length are added to it. A `limitedBody: problem` limiter answers problemBody instead.
 */
export function sendRateLimited(
  res: ServerResponse,
  limiter: CompiledLimiter,
  headers: Record<string, string>,
  violatedPolicies: readonly string[] = [],
): void {
  if (limiter.limitedBody === 'problem') return sendProblem(res, limiter, headers, violatedPolicies);
  let body = refusalBodies.get(limiter);
  if (!body) {
    body = prepared(errorBody('rate_limited', limiter.message));
    refusalBodies.set(limiter, body);
  }
  writeJson(res, 429, body.text, body.length, headers, 'application/json', body.encoding);
}

function sendProblem(
  res: ServerResponse,
  limiter: CompiledLimiter,
  headers: Record<string, string>,
  violatedPolicies: readonly string[],
): void {
  let bodies = problemBodies.get(limiter);
  if (!bodies) problemBodies.set(limiter, (bodies = new Map()));
  const key = violatedPolicies.join(' '); // policy names hold no space
  let body = bodies.get(key);
  if (!body) bodies.set(key, (body = prepared(problemBody(limiter.message, violatedPolicies))));
  writeJson(res, 429, body.text, body.length, headers, 'application/problem+json', body.encoding);
}

/** Adds a refusal's Retry-After to `headers` (before headers that must follow it). */
export function addRetryAfter(headers: Record<string, string>, refusal: Refusal): void {
  if (refusal.retryAfterSec !== undefined) headers['retry-after'] = String(refusal.retryAfterSec);
}

/**
 * Answers a refusal with `headers` (the request's own object, added to) and its Retry-After:
 * a limiter's 429 with its body built once. `status` replaces the refusal's own (a decision
 * listener answers a 429 with 403 for nginx).
 */
export function sendRefusal(
  res: ServerResponse,
  refusal: Refusal,
  headers: Record<string, string>,
  status = refusal.status,
): void {
  addRetryAfter(headers, refusal);
  if (status === 429 && refusal.limiter)
    return sendRateLimited(res, refusal.limiter, headers, refusal.violatedPolicies);
  sendError(res, status, refusal.code, refusal.message, headers);
}
