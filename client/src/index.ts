// @tollgate/client: a fetch-based client for services behind tollgate that follows the interface's
// consumer rules (docs/client.md). Browser-safe: no Node built-ins, no runtime dependencies.
export { TollgateClient, type TollgateClientOptions } from './client.js';
export {
  RateLimitedFetch,
  type CallInit,
  type FetchFn,
  type RateLimitedEvent,
  type RateLimitOptions,
} from './rate-limited-fetch.js';
export {
  SharedLimits,
  RateLimitDeadlineError,
  learn,
  verdict,
  freshState,
  type AcquireOptions,
  type LimitState,
  type Verdict,
  type WaitEvent,
  type WaitReason,
} from './limiter-state.js';
export { parseRateLimitHeaders, parseRetryAfter, retryDelayMs, type RateLimitHeaders } from './headers.js';
export { defaultLimiterKey, hashString, type KeyInput, type LimiterKeyFn } from './limiter-key.js';
export { systemClock, type Clock } from './clock.js';
export { ApiClient, ApiError, type ApiClientOptions } from './api/api-client.js';
export { WebsitesApi } from './api/websites.js';
export { ReportsApi } from './api/reports.js';
export { WidgetApi } from './api/widget.js';
export { BulkSyncApi } from './api/bulk-sync.js';
export type { CallOptions, FormBody, JsonBody, Operation, Query, Success } from './api/types.js';
export type { paths, components, operations } from './generated/openapi.js';
