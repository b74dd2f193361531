/**
 * The access-log formats `tollgate replay` reads, one line at a time: tollgate's own JSON lines,
 * Caddy's JSON access log, and the combined format of nginx (and Caddy's transform encoder).
 * Pure: a line in, a record (or why not) out.
 */

/** One request of a log, as far as keying, routing and pricing need it. */
export interface LogRecord {
  readonly timeMs: number;
  readonly method: string;
  /** The request target as logged. */
  readonly target: string;
  readonly host: string | undefined;
  /** The client address as logged (raw); undefined when the line has none. */
  readonly client: string | undefined;
  /** The raw User-Agent; undefined when the format does not carry it. */
  readonly userAgent: string | undefined;
  /** Hashed key parts by name (tollgate's log.keyParts), as the gateway counted them. */
  readonly keys: Readonly<Record<string, string>> | undefined;
  /** The response's status; undefined when the line has none. */
  readonly status?: number | undefined;
  /** The request body's declared size (Content-Length), when logged. */
  readonly bytes?: number | undefined;
  /** The cost the upstream reported (a chargeAfter header's value), when logged. */
  readonly charged?: number | undefined;
  /**
   * The tier the request's credential names (a JWT claim, a workspace plan), the verified
   * workspace token's id, its workspace, the JWT's subject, when logged; null when the gateway
   * checked and the request had none (undefined: not logged).
   */
  readonly tier?: string | null | undefined;
  readonly token?: string | null | undefined;
  readonly workspace?: string | null | undefined;
  readonly sub?: string | null | undefined;
}

export type LogFormat = 'tollgate' | 'caddy' | 'combined';

export type ParsedLine =
  | { readonly kind: 'record'; readonly format: LogFormat; readonly record: LogRecord }
  /** A line of the log that is not an access line (tollgate's "listening", a blank line). */
  | { readonly kind: 'skip' }
  | { readonly kind: 'bad'; readonly reason: string };

/** A line that is not a record: skipped or bad. */
export type NotRecord = Exclude<ParsedLine, { kind: 'record' }>;

const SKIP: NotRecord = { kind: 'skip' };
const bad = (reason: string): NotRecord => ({ kind: 'bad', reason });
const NOT_JSON = bad('not JSON');

/**
 * A LogRecord with every field set, whatever the format (one shape for the code that reads it):
 * readLine fills one again line after line, so a log's lines make no record each.
 */
export class LineRecord implements LogRecord {
  timeMs = 0;
  method = '';
  target = '';
  host: string | undefined = undefined;
  client: string | undefined = undefined;
  userAgent: string | undefined = undefined;
  keys: Readonly<Record<string, string>> | undefined = undefined;
  status: number | undefined = undefined;
  bytes: number | undefined = undefined;
  charged: number | undefined = undefined;
  tier: string | null | undefined = undefined;
  token: string | null | undefined = undefined;
  workspace: string | null | undefined = undefined;
  sub: string | null | undefined = undefined;
}

export function parseLine(line: string): ParsedLine {
  const record = new LineRecord();
  const read = readLine(line, record);
  return typeof read === 'string' ? { kind: 'record', format: read, record } : read;
}

/** parseLine into `into`: the line's format when it is a record (then `into` holds it; else untouched). */
export function readLine(line: string, into: LineRecord): LogFormat | NotRecord {
  if (line.charCodeAt(0) === 123 /* { */) return parseJsonLine(line, into);
  if (line.trim() === '') return SKIP;
  return parseCombined(line, into);
}

function parseJsonLine(line: string, into: LineRecord): LogFormat | NotRecord {
  let o: unknown;
  try {
    o = JSON.parse(line);
  } catch {
    return NOT_JSON;
  }
  if (typeof o !== 'object' || o === null || Array.isArray(o)) return bad('not a JSON object');
  const obj = o as Record<string, unknown>;
  const req = obj['request'];
  if (typeof req === 'object' && req !== null) return caddyJson(obj, req as Record<string, unknown>, into);
  if ('reqId' in obj) return tollgateJson(obj, into);
  // Other lines of a tollgate or Caddy log (startup, reloads, warnings): not requests.
  return 'msg' in obj || 'level' in obj ? SKIP : bad('neither a tollgate nor a Caddy access line');
}

const str = (v: unknown): string | undefined => (typeof v === 'string' ? v : undefined);
const num = (v: unknown): number | undefined => (typeof v === 'number' ? v : undefined);
/** A credential field: null is the gateway's "checked, none". */
const strOrNull = (v: unknown): string | null | undefined =>
  typeof v === 'string' ? v : v === null ? null : undefined;

function tollgateJson(o: Record<string, unknown>, into: LineRecord): LogFormat | NotRecord {
  const method = str(o['method']);
  const target = str(o['path']);
  // A line with a reqId but no request (a failure's error line): the access line follows.
  if (method === undefined && target === undefined) return SKIP;
  if (!method || !target) return bad('tollgate line without method or path');
  const timeMs = timeOf(o['time']);
  if (timeMs === undefined) return bad('tollgate line without a valid time');
  const keys = o['keys'];
  into.timeMs = timeMs;
  into.method = method;
  into.target = target;
  into.host = str(o['host']);
  into.client = str(o['client']);
  into.userAgent = undefined;
  into.keys = typeof keys === 'object' && keys !== null ? (keys as Record<string, string>) : undefined;
  into.status = num(o['status']);
  into.bytes = num(o['bytes']);
  into.charged = num(o['charged']);
  into.tier = strOrNull(o['tier']);
  into.token = strOrNull(o['token']);
  into.workspace = strOrNull(o['workspace']);
  into.sub = strOrNull(o['sub']);
  return 'tollgate';
}

function caddyJson(
  o: Record<string, unknown>,
  req: Record<string, unknown>,
  into: LineRecord,
): LogFormat | NotRecord {
  const method = str(req['method']);
  const target = str(req['uri']);
  if (!method || !target) return bad('Caddy line without request.method or request.uri');
  const timeMs = timeOf(o['ts']);
  if (timeMs === undefined) return bad('Caddy line without a valid ts');
  const headers = req['headers'] as Record<string, unknown> | undefined;
  const ua = headers?.['User-Agent'] ?? headers?.['user-agent'];
  into.timeMs = timeMs;
  into.method = method;
  into.target = target;
  into.host = str(req['host']);
  into.client = str(req['client_ip']) ?? str(req['remote_ip']);
  into.userAgent = Array.isArray(ua) ? headerText(ua) : str(ua);
  into.status = num(o['status']);
  unlogged(into);
  return 'caddy';
}

/** The fields Caddy's and the combined lines do not carry. */
function unlogged(into: LineRecord): void {
  into.keys = undefined;
  into.bytes = undefined;
  into.charged = undefined;
  into.tier = undefined;
  into.token = undefined;
  into.workspace = undefined;
  into.sub = undefined;
}

/** A header's values as one (Caddy logs each header as a list): most are a list of one. */
const headerText = (values: unknown[]): string =>
  values.length === 1 && typeof values[0] === 'string' ? values[0] : values.map(String).join(', ');

/** A time as logged: Unix seconds (Caddy's ts, fractional), or an ISO date (pino's isoTime). */
function timeOf(v: unknown): number | undefined {
  if (typeof v === 'number') return Number.isFinite(v) ? (v > 1e11 ? v : v * 1000) : undefined;
  if (typeof v !== 'string') return undefined;
  const t = isoTime(v);
  return Number.isNaN(t) ? undefined : t;
}

/** The minute of the last ISO time parsed (`2026-11-16T00:00:`), and its first instant. */
let lastMinute = { prefix: '', ms: NaN };
const MINUTE = 17; // `YYYY-MM-DDTHH:MM:`
const ISO_MINUTE = /^\d{4}-\d\d-\d\dT\d\d:\d\d:/;

const digit = (text: string, i: number): number => text.charCodeAt(i) - 48;

/**
 * Date.parse, with `YYYY-MM-DDTHH:MM:SS.mmmZ` (pino's isoTime) read from the last such time's
 * minute: lines of one minute share it, and Date.parse costs more than the rest of the line's fields.
 */
export function isoTime(text: string): number {
  if (text.length !== MINUTE + 7 || text.charCodeAt(19) !== 46 /* . */ || text.charCodeAt(23) !== 90 /* Z */)
    return Date.parse(text);
  const s1 = digit(text, 17);
  const s2 = digit(text, 18);
  const m1 = digit(text, 20);
  const m2 = digit(text, 21);
  const m3 = digit(text, 22);
  if (!(
    s1 >= 0 &&
    s1 <= 5 &&
    s2 >= 0 &&
    s2 <= 9 &&
    m1 >= 0 &&
    m1 <= 9 &&
    m2 >= 0 &&
    m2 <= 9 &&
    m3 >= 0 &&
    m3 <= 9
  ))
    return Date.parse(text);
  if (!text.startsWith(lastMinute.prefix) || lastMinute.prefix === '') {
    // Hour 24 is read as the next midnight by Date.parse at 24:00:00.000 only.
    if (!ISO_MINUTE.test(text) || digit(text, 11) * 10 + digit(text, 12) > 23) return Date.parse(text);
    const prefix = text.slice(0, MINUTE);
    const ms = Date.parse(`${prefix}00.000Z`);
    if (Number.isNaN(ms)) return Date.parse(text);
    lastMinute = { prefix, ms };
  }
  return lastMinute.ms + (s1 * 10 + s2) * 1000 + m1 * 100 + m2 * 10 + m3;
}

/** `ip ident user [time] "request" status bytes "referer" "user agent"`, the quoted fields escaped with \. */
const COMBINED =
  /^(\S+) \S+ \S+ \[([^\]]+)\] "((?:[^"\\]|\\.)*)" (\d{3}) \S+(?: "(?:[^"\\]|\\.)*" "((?:[^"\\]|\\.)*)")?/;

function parseCombined(line: string, into: LineRecord): LogFormat | NotRecord {
  const m = COMBINED.exec(line);
  if (!m) return bad('not a combined or JSON access line');
  const timeMs = clfTime(m[2]!);
  if (timeMs === undefined) return bad(`not a log time: "${m[2]}"`);
  const request = m[3]!;
  const sp = request.indexOf(' ');
  const sp2 = request.indexOf(' ', sp + 1);
  if (sp <= 0) return bad(`not a request line: "${request}"`);
  const target = request.slice(sp + 1, sp2 === -1 ? undefined : sp2);
  if (target === '') return bad(`not a request line: "${request}"`);
  const ua = m[5];
  into.timeMs = timeMs;
  into.method = request.slice(0, sp);
  into.target = target;
  into.host = undefined;
  into.client = m[1];
  into.userAgent = ua === undefined ? undefined : unescape(ua);
  into.status = Number(m[4]);
  unlogged(into);
  return 'combined';
}

/** nginx writes `"` and non-ASCII as \xHH, Apache and Caddy as \" and \\. */
function unescape(s: string): string {
  if (!s.includes('\\')) return s;
  return s.replace(/\\x([0-9A-Fa-f]{2})|\\(.)/g, (_, hex: string | undefined, c: string | undefined) =>
    hex ? String.fromCharCode(parseInt(hex, 16)) : c!,
  );
}

const MONTHS: Record<string, number> = {
  Jan: 0,
  Feb: 1,
  Mar: 2,
  Apr: 3,
  May: 4,
  Jun: 5,
  Jul: 6,
  Aug: 7,
  Sep: 8,
  Oct: 9,
  Nov: 10,
  Dec: 11,
};
const CLF_TIME =
  /^(\d{2})\/([A-Z][a-z]{2})\/(\d{4}):(\d{2}):(\d{2}):(\d{2})(?:\.(\d{1,3})\d*)? ([+-])(\d{2})(\d{2})$/;

/** The last time parsed: lines of one second share it. */
let lastClf = { text: '', ms: 0 };

/** `10/Oct/2000:13:55:36 -0700` (milliseconds allowed after the seconds). */
export function clfTime(text: string): number | undefined {
  if (text === lastClf.text) return lastClf.ms;
  const m = CLF_TIME.exec(text);
  const month = m ? MONTHS[m[2]!] : undefined;
  if (!m || month === undefined) return undefined;
  const [day, hour, min, sec] = [m[1], m[4], m[5], m[6]].map(Number) as [number, number, number, number];
  if (day < 1 || day > 31 || hour > 23 || min > 59 || sec > 60) return undefined;
  const frac = m[7] ? Number(m[7].padEnd(3, '0')) : 0;
  const offsetMin = (m[8] === '-' ? -1 : 1) * (Number(m[9]) * 60 + Number(m[10]));
  const ms = Date.UTC(Number(m[3]), month, day, hour, min, sec, frac) - offsetMin * 60_000;
  lastClf = { text, ms };
  return ms;
}
