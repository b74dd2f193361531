// "Expect: 100-continue": the gateway says "continue" only to a request it will forward.
import { connect } from 'node:net';
import { expect } from 'vitest';
import { gatewayTest } from '../helpers/fixtures.js';
import { gatewayYaml } from '../helpers/gateway.js';
import { waitFor } from '../helpers/wait.js';

const test = gatewayTest({
  redis: false,
  config: gatewayYaml(`
upstreams:
  app: { url: '\${UPSTREAM_URL}' }
routes:
  - name: once
    paths: [/once]
    upstream: app
    limiters: [{ windows: [{ limit: 1, period: 1h, key: [ip] }] }]
  - { name: small, paths: [/small], upstream: app, maxBodySize: 10 }
`),
});

/**
 * Sends the head with "Expect: 100-continue", and the body only if the gateway says continue.
 * Resolves with everything the gateway wrote.
 */
function expectContinue(gatewayUrl: string, path: string, body: string): Promise<string> {
  const { port } = new URL(gatewayUrl);
  return new Promise((resolve, reject) => {
    const socket = connect(Number(port), '127.0.0.1');
    let text = '';
    let sentBody = false;
    socket.on('data', (d: Buffer) => {
      text += d.toString();
      if (!sentBody && text.startsWith('HTTP/1.1 100 Continue\r\n\r\n')) {
        sentBody = true;
        socket.write(body);
      }
    });
    socket.on('end', () => resolve(text));
    socket.on('error', reject);
    socket.write(
      `POST ${path} HTTP/1.1\r\nHost: x\r\nContent-Type: text/plain\r\nContent-Length: ${body.length}\r\n` +
        'Expect: 100-continue\r\nConnection: close\r\n\r\n',
    );
  });
}

test('an allowed request gets 100 Continue, then its body is forwarded', async ({ gateway, upstream }) => {
  const text = await expectContinue(gateway.url(), '/once', 'hello');
  expect(text.startsWith('HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 200 OK\r\n')).toBe(true);
  await waitFor(
    () => upstream.seen.length,
    (n) => n === 1,
    { what: 'the upstream to see the request' },
  );
});

test('a limited request gets its 429 at once, with no 100 Continue, and nothing is forwarded', async ({
  gateway,
  upstream,
}) => {
  const before = upstream.seen.length;
  const text = await expectContinue(gateway.url(), '/once', 'hello');
  expect(text.startsWith('HTTP/1.1 429 Too Many Requests\r\n')).toBe(true);
  expect(text.endsWith('{"error":{"code":"rate_limited","message":"Too Many Attempts."}}')).toBe(true);
  expect(upstream.seen.length).toBe(before);
});

test('a declared body over the bound gets its 413 with no 100 Continue', async ({ gateway, upstream }) => {
  const before = upstream.seen.length;
  const text = await expectContinue(gateway.url(), '/small', 'x'.repeat(11));
  expect(text.startsWith('HTTP/1.1 413 Payload Too Large\r\n')).toBe(true);
  expect(
    text.endsWith('{"error":{"code":"payload_too_large","message":"The request body exceeds 10 bytes."}}'),
  ).toBe(true);
  expect(upstream.seen.length).toBe(before);
});
