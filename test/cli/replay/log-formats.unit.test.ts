// The access-log formats replay reads: every field it needs from each, and what it makes of lines
// that are not requests or not readable.
import fc from 'fast-check';
import { describe, expect, test } from 'vitest';
import { clfTime, isoTime, LineRecord, parseLine, readLine } from '../../../src/cli/replay/log-formats.js';

const record = (line: string) => {
  const parsed = parseLine(line);
  if (parsed.kind !== 'record') throw new Error(`not a record: ${JSON.stringify(parsed)}`);
  return { format: parsed.format, ...parsed.record };
};

describe("tollgate's own lines", () => {
  test('an access line with log.keyParts: time, request, host, client and the hashed parts', () => {
    const line = JSON.stringify({
      level: 30,
      time: '2026-11-16T10:00:00.250Z',
      reqId: 'a1',
      method: 'POST',
      path: '/api/orders?x=1',
      client: '2001:db8::7',
      status: 200,
      route: 'orders',
      limit: 'allowed',
      host: 'api.example.com',
      keys: { ip: 'IPHASH', user_agent: 'UAHASH', jwt: 'JWTHASH' },
    });
    expect(record(line)).toEqual({
      format: 'tollgate',
      timeMs: Date.parse('2026-11-16T10:00:00.250Z'),
      method: 'POST',
      target: '/api/orders?x=1',
      host: 'api.example.com',
      client: '2001:db8::7',
      userAgent: undefined,
      keys: { ip: 'IPHASH', user_agent: 'UAHASH', jwt: 'JWTHASH' },
      status: 200,
    });
  });

  test('an access line without key parts (and pino epoch-ms time) is a record without keys', () => {
    const line =
      '{"level":30,"time":1763287200000,"reqId":"b","method":"GET","path":"/x","client":"10.0.0.1"}';
    expect(record(line)).toMatchObject({
      timeMs: 1763287200000,
      keys: undefined,
      host: undefined,
      client: '10.0.0.1',
    });
  });

  test("other lines of the log are skipped: startup, a failure's error line", () => {
    expect(parseLine('{"level":30,"time":"2026-11-16T10:00:00Z","msg":"listening","port":8080}')).toEqual({
      kind: 'skip',
    });
    expect(
      parseLine('{"level":50,"time":"2026-11-16T10:00:00Z","reqId":"c","err":{},"msg":"request failed"}'),
    ).toEqual({ kind: 'skip' });
    expect(parseLine('')).toEqual({ kind: 'skip' });
    expect(parseLine('   ')).toEqual({ kind: 'skip' });
  });
});

describe("Caddy's JSON access log", () => {
  const caddy = (over: Record<string, unknown> = {}, request: Record<string, unknown> = {}) =>
    JSON.stringify({
      level: 'info',
      ts: 1763287200.5,
      logger: 'http.log.access.log0',
      msg: 'handled request',
      request: {
        remote_ip: '10.0.0.9',
        client_ip: '198.51.100.4',
        method: 'GET',
        host: 'shop.example.com',
        uri: '/api/items/7',
        headers: { 'User-Agent': ['curl/8.5.0'] },
        ...request,
      },
      status: 200,
      ...over,
    });

  test('client_ip (the trusted-proxy walk) over remote_ip, the User-Agent, fractional ts', () => {
    expect(record(caddy())).toEqual({
      format: 'caddy',
      timeMs: 1763287200500,
      method: 'GET',
      target: '/api/items/7',
      host: 'shop.example.com',
      client: '198.51.100.4',
      userAgent: 'curl/8.5.0',
      keys: undefined,
      status: 200,
    });
    expect(record(caddy({}, { client_ip: undefined }))).toMatchObject({ client: '10.0.0.9' });
  });

  test('ts as an ISO time (time_format iso8601); no headers: no user agent', () => {
    expect(record(caddy({ ts: '2026-11-16T10:00:00.000Z' }, { headers: undefined }))).toMatchObject({
      timeMs: Date.parse('2026-11-16T10:00:00.000Z'),
      userAgent: undefined,
    });
  });

  test('a line without uri or a usable ts is bad', () => {
    expect(parseLine(caddy({}, { uri: undefined }))).toEqual({
      kind: 'bad',
      reason: 'Caddy line without request.method or request.uri',
    });
    expect(parseLine(caddy({ ts: 'yesterday' }))).toEqual({
      kind: 'bad',
      reason: 'Caddy line without a valid ts',
    });
  });
});

describe('the combined format (nginx, Apache, Caddy)', () => {
  test('address, time with its offset, request line, user agent', () => {
    const line =
      '203.0.113.9 - alice [16/Nov/2026:11:00:00 +0100] "GET /api/search?q=a HTTP/1.1" 200 512 "https://x.example/" "Mozilla/5.0 (X11)"';
    expect(record(line)).toEqual({
      format: 'combined',
      timeMs: Date.parse('2026-11-16T10:00:00Z'),
      method: 'GET',
      target: '/api/search?q=a',
      host: undefined,
      client: '203.0.113.9',
      userAgent: 'Mozilla/5.0 (X11)',
      keys: undefined,
      status: 200,
    });
  });

  test("nginx's \\x22 and Apache's \\\" escapes are undone in the user agent", () => {
    const nginx = '10.0.0.1 - - [16/Nov/2026:10:00:00 +0000] "GET / HTTP/1.1" 200 5 "-" "say \\x22hi\\x22"';
    const apache =
      '10.0.0.1 - - [16/Nov/2026:10:00:00 +0000] "GET / HTTP/1.1" 200 5 "-" "say \\"hi\\" \\\\o/"';
    expect(record(nginx).userAgent).toBe('say "hi"');
    expect(record(apache).userAgent).toBe('say "hi" \\o/');
  });

  test('the common format (no referer, no user agent): a record whose user agent is unknown', () => {
    expect(
      record('10.0.0.1 - - [16/Nov/2026:10:00:00 -0000] "POST /api/orders HTTP/2.0" 201 -'),
    ).toMatchObject({
      method: 'POST',
      target: '/api/orders',
      userAgent: undefined,
    });
  });

  test.each([
    ['garbage', 'not a combined or JSON access line'],
    ['10.0.0.1 - - [16/Nov/2026:10:00:00 +0000] "GET / HTTP/1.1', 'not a combined or JSON access line'],
    [
      '10.0.0.1 - - [32/Nov/2026:10:00:00 +0000] "GET / HTTP/1.1" 200 5',
      'not a log time: "32/Nov/2026:10:00:00 +0000"',
    ],
    [
      '10.0.0.1 - - [16/Foo/2026:10:00:00 +0000] "GET / HTTP/1.1" 200 5',
      'not a log time: "16/Foo/2026:10:00:00 +0000"',
    ],
    ['10.0.0.1 - - [16/Nov/2026:10:00:00 +0000] "-" 400 0 "-" "-"', 'not a request line: "-"'],
    ['{"reqId": 1, "method": "GET"', 'not JSON'],
    ['{"reqId":"x","method":"GET","path":"/","time":"soon"}', 'tollgate line without a valid time'],
    ['{"reqId":"x","method":"GET","time":"2026-11-16T10:00:00Z"}', 'tollgate line without method or path'],
    ['{"hello":"world"}', 'neither a tollgate nor a Caddy access line'],
  ])('a bad line: %s', (line, reason) => {
    expect(parseLine(line)).toEqual({ kind: 'bad', reason });
  });

  test('clfTime agrees with Date for any time and offset', () => {
    const MONTHS = ['Jan', 'Feb', 'Mar', 'Apr', 'May', 'Jun', 'Jul', 'Aug', 'Sep', 'Oct', 'Nov', 'Dec'];
    const two = (n: number) => String(n).padStart(2, '0');
    fc.assert(
      fc.property(
        fc.integer({ min: Date.UTC(2000, 0, 1) / 1000, max: Date.UTC(2090, 0, 1) / 1000 }),
        fc.integer({ min: -12 * 60, max: 14 * 60 }),
        (sec, offsetMin) => {
          const local = new Date(sec * 1000 + offsetMin * 60_000);
          const sign = offsetMin < 0 ? '-' : '+';
          const abs = Math.abs(offsetMin);
          const text =
            `${two(local.getUTCDate())}/${MONTHS[local.getUTCMonth()]}/${local.getUTCFullYear()}:` +
            `${two(local.getUTCHours())}:${two(local.getUTCMinutes())}:${two(local.getUTCSeconds())} ` +
            `${sign}${two(Math.floor(abs / 60))}${two(abs % 60)}`;
          expect(clfTime(text)).toBe(sec * 1000);
        },
      ),
    );
  });
});

test('isoTime agrees with Date.parse, time after time (its minute remembered), odd fields too', () => {
  const two = (n: number) => String(n).padStart(2, '0');
  // Fields a digit or two past their range (day 31 of a 30-day month, hour 24, second 60): Date.parse decides.
  const field = (max: number) => fc.integer({ min: 0, max }).map(two);
  const iso = fc
    .tuple(
      fc.constantFrom('2026', '2027', '1999'),
      field(13),
      field(32),
      field(25),
      field(61),
      field(61),
      fc.integer({ min: 0, max: 999 }).map((n) => String(n).padStart(3, '0')),
    )
    .map(([y, mo, d, h, mi, s, ms]) => `${y}-${mo}-${d}T${h}:${mi}:${s}.${ms}Z`);
  const text = fc.oneof(
    iso,
    iso.map((t) => t.replace('Z', '+01:00')),
    fc.string({ maxLength: 26 }),
  );
  fc.assert(
    fc.property(fc.array(text, { maxLength: 20 }), (times) => {
      for (const t of times) expect(isoTime(t)).toBe(Date.parse(t));
    }),
    { numRuns: 500 },
  );
  // The same minute again, then its neighbours.
  for (const t of ['2026-11-16T23:59:58.999Z', '2026-11-16T23:59:07.001Z', '2026-11-16T24:00:00.000Z'])
    expect(isoTime(t)).toBe(Date.parse(t));
});

test('no line, however malformed, throws', () => {
  fc.assert(
    fc.property(fc.oneof(fc.string(), fc.json(), fc.constant('{'), fc.constant('1.2.3.4 - - [')), (line) => {
      expect(['record', 'skip', 'bad']).toContain(parseLine(line).kind);
    }),
  );
});

test('one LineRecord read line after line holds only the last record: nothing of a line before it leaks', () => {
  const tollgate = JSON.stringify({
    time: '2026-11-16T10:00:00.250Z',
    reqId: 'a1',
    method: 'POST',
    path: '/api/orders',
    client: '10.0.0.1',
    status: 429,
    host: 'api.example.com',
    keys: { ip: 'IPHASH' },
    bytes: 120,
    charged: 3,
    tier: 'gold',
    token: 'tok_1',
    workspace: 'ws_1',
    sub: 'user-1',
  });
  const caddy = JSON.stringify({
    ts: 1763287200.5,
    msg: 'handled request',
    request: { client_ip: '198.51.100.4', method: 'GET', host: 'shop.example.com', uri: '/a', headers: {} },
    status: 200,
  });
  const combined = '203.0.113.9 - - [16/Nov/2026:11:00:00 +0100] "GET /b HTTP/1.1" 200 512 "-" "curl/8"';
  const fresh = (line: string) => (parseLine(line) as { record: LineRecord }).record;
  const into = new LineRecord();
  for (const line of [tollgate, caddy, tollgate, combined, tollgate]) {
    expect(typeof readLine(line, into)).toBe('string');
    expect(into).toStrictEqual(fresh(line));
  }
  // A line that is not a record leaves the record as it was.
  const before = { ...into };
  expect(readLine('garbage', into)).toEqual({ kind: 'bad', reason: 'not a combined or JSON access line' });
  expect(readLine('{"msg":"listening"}', into)).toEqual({ kind: 'skip' });
  expect({ ...into }).toEqual(before);
});
