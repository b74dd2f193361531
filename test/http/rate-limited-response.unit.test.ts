// sendRateLimited (the 429 with its body built once per limiter) writes exactly what
// sendError(res, 429, 'rate_limited', message, headers) writes: status, headers in the same order,
// body and its byte length; and, like it, destroys a response whose headers were already sent.
import type { Refusal } from '../../src/limits/refusal.js';
import { createServer, request, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { describe, expect, test } from 'vitest';
import type { CompiledLimiter } from '../../src/rules/compile.js';
import { problemBody, sendError, sendRateLimited, sendRefusal } from '../../src/http/responses.js';

interface Written {
  status?: number;
  headers?: [string, string][];
  body?: string;
  destroyed: boolean;
}

function recorder(headersSent = false): { res: ServerResponse; written: Written } {
  const written: Written = { destroyed: false };
  const res = {
    headersSent,
    writeHead(status: number, headers: Record<string, string>) {
      written.status = status;
      written.headers = Object.entries(headers);
      return this;
    },
    end(body: string) {
      written.body = body;
      return this;
    },
    destroy() {
      written.destroyed = true;
      return this;
    },
  };
  return { res: res as unknown as ServerResponse, written };
}

const limiter = (message: string) => ({ name: 'l', message }) as unknown as CompiledLimiter;
const rateHeaders = () => ({
  'x-request-id': 'r1',
  'x-ratelimit-limit': '10',
  'x-ratelimit-remaining': '0',
  'x-ratelimit-reset': '1795000000',
  'retry-after': '42',
});

describe('sendRateLimited', () => {
  test.each(['Too Many Attempts.', 'Trop de requêtes « 😀 »', 'a "quoted" \\ message'])(
    'writes what sendError writes: %s',
    (message) => {
      const compiled = limiter(message);
      const expected = recorder();
      sendError(expected.res, 429, 'rate_limited', message, rateHeaders());
      // Twice: the second answer comes from the body kept for this limiter.
      for (let i = 0; i < 2; i++) {
        const actual = recorder();
        sendRateLimited(actual.res, compiled, rateHeaders());
        expect(actual.written).toEqual(expected.written);
      }
      expect(expected.written.headers).toContainEqual([
        'content-length',
        String(Buffer.byteLength(expected.written.body!)),
      ]);
    },
  );

  test('a response whose headers were sent is destroyed, as sendError does', () => {
    const expected = recorder(true);
    sendError(expected.res, 429, 'rate_limited', 'm', rateHeaders());
    const actual = recorder(true);
    sendRateLimited(actual.res, limiter('m'), rateHeaders());
    expect(actual.written).toEqual({ destroyed: true });
    expect(expected.written).toEqual({ destroyed: true });
  });

  test("a reload's new limiter with another message gets its own body", () => {
    const before = recorder();
    sendRateLimited(before.res, limiter('old'), rateHeaders());
    const after = recorder();
    sendRateLimited(after.res, limiter('new'), rateHeaders());
    expect(before.written.body).toBe('{"error":{"code":"rate_limited","message":"old"}}');
    expect(after.written.body).toBe('{"error":{"code":"rate_limited","message":"new"}}');
  });
});

describe('sendRateLimited with limitedBody: problem', () => {
  const problem = (message: string) =>
    ({ name: 'p', message, limitedBody: 'problem' }) as unknown as CompiledLimiter;

  test('application/problem+json of type quota-exceeded, with the violated policies, the same headers otherwise', () => {
    const compiled = problem('Slow down « 😀 ».');
    const expected =
      '{"type":"https://iana.org/assignments/http-problem-types#quota-exceeded",' +
      '"title":"Request cannot be satisfied as assigned quota has been exceeded","status":429,' +
      '"detail":"Slow down « 😀 ».","violated-policies":["p.0","p.1"]}';
    for (let i = 0; i < 2; i++) {
      const actual = recorder();
      sendRateLimited(actual.res, compiled, rateHeaders(), ['p.0', 'p.1']);
      expect(actual.written).toEqual({
        destroyed: false,
        status: 429,
        headers: [
          ...Object.entries(rateHeaders()),
          ['content-type', 'application/problem+json'],
          ['content-length', String(Buffer.byteLength(expected))],
        ],
        body: expected,
      });
    }
    expect(problemBody('Slow down « 😀 ».', ['p.0', 'p.1'])).toBe(expected);
  });

  test('each set of violated policies gets its own body; an error limiter ignores them', () => {
    const compiled = problem('m');
    const one = recorder();
    sendRateLimited(one.res, compiled, rateHeaders(), ['p.1']);
    const two = recorder();
    sendRateLimited(two.res, compiled, rateHeaders(), ['p.0', 'p.1']);
    expect(JSON.parse(one.written.body!)).toMatchObject({ 'violated-policies': ['p.1'] });
    expect(JSON.parse(two.written.body!)).toMatchObject({ 'violated-policies': ['p.0', 'p.1'] });
    const plain = recorder();
    sendRateLimited(plain.res, limiter('m'), rateHeaders(), ['l.0']);
    expect(plain.written.body).toBe('{"error":{"code":"rate_limited","message":"m"}}');
    expect(plain.written.headers).toContainEqual(['content-type', 'application/json']);
  });

  test('sendRefusal of a 403 (a decision listener) keeps the error shape', () => {
    const actual = recorder();
    const refusal: Refusal = {
      status: 429,
      code: 'rate_limited',
      decision: 'limited',
      message: 'm',
      limiter: problem('m'),
      violatedPolicies: ['p.0'],
    };
    sendRefusal(actual.res, refusal, {}, 403);
    expect(actual.written.status).toBe(403);
    expect(actual.written.body).toBe('{"error":{"code":"rate_limited","message":"m"}}');
  });
});

/** The status, Content-Length and body bytes a real socket carries for sendRateLimited. */
async function onTheWire(
  limiter: CompiledLimiter,
): Promise<{ status?: number; length?: string; body: Buffer }> {
  const server = createServer((_req, res) => sendRateLimited(res, limiter, rateHeaders(), ['l.0']));
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  try {
    const { port } = server.address() as AddressInfo;
    return await new Promise((resolve, reject) => {
      request({ port, host: '127.0.0.1', path: '/' }, (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () =>
          resolve({
            status: res.statusCode,
            length: res.headers['content-length'],
            body: Buffer.concat(chunks),
          }),
        );
      })
        .on('error', reject)
        .end();
    });
  } finally {
    server.close();
  }
}

// An ASCII body is written as latin1 (the same bytes, no UTF-8 encoding pass); any other as UTF-8.
describe('the bytes sent', () => {
  test.each([
    [
      'ASCII',
      limiter('Too Many Attempts.'),
      '{"error":{"code":"rate_limited","message":"Too Many Attempts."}}',
    ],
    [
      'non-ASCII',
      limiter('Trop de requêtes « 😀 »'),
      '{"error":{"code":"rate_limited","message":"Trop de requêtes « 😀 »"}}',
    ],
    [
      'problem, non-ASCII',
      {
        name: 'p',
        message: 'Zu viele Anfragen – später.',
        limitedBody: 'problem',
      } as unknown as CompiledLimiter,
      problemBody('Zu viele Anfragen – später.', ['l.0']),
    ],
  ])('%s: the UTF-8 bytes of the body, and their count as Content-Length', async (_n, compiled, text) => {
    const expected = Buffer.from(text, 'utf8');
    expect(await onTheWire(compiled)).toEqual({
      status: 429,
      length: String(expected.length),
      body: expected,
    });
  });
});
