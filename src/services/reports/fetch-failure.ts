/** Why a page could not be fetched, and what the client reads about it. */
import { NOT_PUBLIC_CODE } from './address-policy.js';

export type FetchFailureReason =
  | 'dns'
  | 'connect'
  | 'tls'
  | 'timeout'
  | 'status'
  | 'not_html'
  | 'too_large'
  | 'redirects'
  | 'bad_redirect'
  | 'not_public'
  | 'decode'
  | 'other';

/** A page that could not be fetched; `message` is what the client reads on `url`. */
export class FetchFailure extends Error {
  constructor(
    readonly reason: FetchFailureReason,
    message: string,
  ) {
    super(message);
  }
}

function plural(n: number, unit: string): string {
  return `${n} ${unit}${n === 1 ? '' : 's'}`;
}

/** 5242880 → "5 MB"; sizes that are not whole MB or KB are given in bytes. */
export function sizeText(bytes: number): string {
  if (bytes % (1024 * 1024) === 0) return `${bytes / (1024 * 1024)} MB`;
  if (bytes % 1024 === 0) return `${bytes / 1024} KB`;
  return plural(bytes, 'byte');
}

/** The messages of the 422 on `url`, for settings in force. */
export function failureMessage(
  reason: FetchFailureReason,
  settings: { readonly timeout: number; readonly maxSize: number },
  status = 0,
): string {
  switch (reason) {
    case 'dns':
      return 'Could not resolve the host.';
    case 'connect':
      return 'Could not connect to the host.';
    case 'tls':
      return 'Could not establish a secure connection to the host.';
    case 'timeout':
      return `The page took longer than ${plural(settings.timeout / 1000, 'second')} to load.`;
    case 'status':
      return `The page answered with HTTP status ${status}.`;
    case 'not_html':
      return 'The page is not an HTML document.';
    case 'too_large':
      return `The page is larger than ${sizeText(settings.maxSize)}.`;
    case 'redirects':
      return 'Too many redirects.';
    case 'bad_redirect':
      return 'The page redirected to an address that is not http or https.';
    case 'not_public':
      return 'The address is not public: refusing to fetch it.';
    case 'decode':
      return 'The page could not be decompressed.';
    case 'other':
      return 'Could not fetch the page.';
  }
}

export function errorCode(err: unknown): string | undefined {
  for (let e: unknown = err, depth = 0; e && typeof e === 'object' && depth < 4; depth++) {
    const code = (e as { code?: unknown }).code;
    if (typeof code === 'string') return code;
    e = (e as { cause?: unknown }).cause;
  }
  return undefined;
}

/** What went wrong, from an error of DNS, the socket, TLS or undici. */
export function failureReason(err: unknown, signal: AbortSignal): FetchFailureReason {
  if (signal.aborted) return 'timeout';
  const code = errorCode(err) ?? '';
  if (code === NOT_PUBLIC_CODE) return 'not_public';
  if (['ENOTFOUND', 'EAI_AGAIN', 'ENODATA', 'EAI_NODATA', 'EAI_FAIL'].includes(code)) return 'dns';
  if (
    ['UND_ERR_CONNECT_TIMEOUT', 'UND_ERR_HEADERS_TIMEOUT', 'UND_ERR_BODY_TIMEOUT', 'ETIMEDOUT'].includes(code)
  )
    return 'timeout';
  if (/CERT|TLS|SSL/.test(code)) return 'tls';
  if (['ECONNREFUSED', 'ECONNRESET', 'EHOSTUNREACH', 'ENETUNREACH', 'UND_ERR_SOCKET'].includes(code))
    return 'connect';
  return 'other';
}
