import type { LimiterDecision } from '../metrics/outcomes.js';
import type { CompiledLimiter } from '../rules/model.js';

/**
 * A request the gateway answers itself, in its JSON error shape {"error":{"code","message"}}: a
 * limiter's 429 or a failing-closed store's 503 (counting, http/count-request.ts), an in-flight
 * cap (admission.ts), a bad credential's 401, a malformed request's 400.
 */
export interface Refusal {
  readonly status: number;
  readonly code: string;
  readonly message: string;
  /** What the request's limiters count it as (metrics, access log). */
  readonly decision: LimiterDecision;
  /** Sent as Retry-After, in whole seconds, when the refusal says when to come back. */
  readonly retryAfterSec?: number;
  /** The limiter whose window refused a 429: its body is built once (http/responses.ts). */
  readonly limiter?: CompiledLimiter;
  /** A 429's spent windows, by policy name (the problem+json body's violated-policies). */
  readonly violatedPolicies?: readonly string[];
}
