// onRequestEnd: a request's cleanups run exactly once, in order, whether the response closes or
// (pipelined HTTP/1.1) the connection drops under queued requests, whose responses Node sends no 'close'.
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { connect, type AddressInfo } from 'node:net';
import { afterEach, expect, test } from 'vitest';
import { onRequestEnd, runEndHooks, watchEnds, type EndHooks } from '../../src/proxy/request-end.js';
import { waitFor } from '../helpers/wait.js';

let server: Server | undefined;
afterEach(async () => {
  if (server === undefined) return;
  server.closeAllConnections();
  await new Promise((resolve) => server!.close(resolve));
  server = undefined;
});

async function listen(handler: (req: IncomingMessage, res: ServerResponse) => void): Promise<number> {
  server = createServer(handler);
  await new Promise<void>((resolve) => server!.listen(0, '127.0.0.1', resolve));
  return (server.address() as AddressInfo).port;
}

test('two cleanups of one request: each run once, in order, when the response closes', async () => {
  const ran: string[] = [];
  const port = await listen((req, res) => {
    onRequestEnd(req, res, () => ran.push('first'));
    onRequestEnd(req, res, () => ran.push('second'));
    res.end('ok');
  });
  const answer = await fetch(`http://127.0.0.1:${port}/`);
  expect(answer.status).toBe(200);
  expect(await answer.text()).toBe('ok');
  await waitFor(
    () => ran.length,
    (n) => n === 2,
    { what: 'both cleanups' },
  );
  expect(ran).toEqual(['first', 'second']);
});

test('a cleanup registered once the response has closed runs at once', async () => {
  const ran: string[] = [];
  const port = await listen((req, res) => {
    onRequestEnd(req, res, () => ran.push('before'));
    res.end('ok');
    res.once('close', () => {
      onRequestEnd(req, res, () => ran.push('after'));
      ran.push('registered');
    });
  });
  expect((await fetch(`http://127.0.0.1:${port}/`)).status).toBe(200);
  await waitFor(
    () => ran.length,
    (n) => n === 3,
    { what: 'the cleanups' },
  );
  expect(ran).toEqual(['before', 'after', 'registered']);
});

test('pipelined requests left unanswered: every cleanup of every request runs once when the connection drops', async () => {
  const ran: string[] = [];
  let seen = 0;
  const port = await listen((req, res) => {
    seen++;
    onRequestEnd(req, res, () => ran.push(`${req.url} admission`));
    onRequestEnd(req, res, () => ran.push(`${req.url} relay`));
  });
  const socket = connect(port, '127.0.0.1');
  await new Promise<void>((resolve) => socket.once('connect', resolve));
  socket.write(['/a', '/b', '/c'].map((p) => `GET ${p} HTTP/1.1\r\nHost: x\r\n\r\n`).join(''));
  await waitFor(
    () => seen,
    (n) => n === 3,
    { what: 'the three requests' },
  );
  socket.destroy();
  await waitFor(
    () => ran.length,
    (n) => n >= 6,
    { what: 'the cleanups' },
  );
  // A moment for a second run, had there been one.
  await new Promise((resolve) => setTimeout(resolve, 50));
  expect([...ran].sort()).toEqual([
    '/a admission',
    '/a relay',
    '/b admission',
    '/b relay',
    '/c admission',
    '/c relay',
  ]);
  for (const p of ['/a', '/b', '/c'])
    expect(ran.indexOf(`${p} admission`)).toBeLessThan(ran.indexOf(`${p} relay`));
});

test("watched hooks: the cleanups are held for the one 'close' listener that runs them, once each, in order", async () => {
  const ran: string[] = [];
  const listeners: number[] = [];
  const port = await listen((req, res) => {
    const hooks: EndHooks = { ends: undefined };
    watchEnds(hooks);
    res.on('close', () => {
      runEndHooks(hooks);
      runEndHooks(hooks); // a second run finds nothing
    });
    onRequestEnd(req, res, () => ran.push('admission'), hooks);
    onRequestEnd(req, res, () => ran.push('relay'), hooks);
    listeners.push(res.listenerCount('close'));
    res.end('ok');
  });
  expect((await fetch(`http://127.0.0.1:${port}/`)).status).toBe(200);
  await waitFor(
    () => ran.length,
    (n) => n === 2,
    { what: 'both cleanups' },
  );
  expect(ran).toEqual(['admission', 'relay']);
  expect(listeners).toEqual([1]);
});

test('hooks not watched: a cleanup gets a listener of its own', async () => {
  const ran: string[] = [];
  const port = await listen((req, res) => {
    onRequestEnd(req, res, () => ran.push('own'), { ends: undefined });
    expect(res.listenerCount('close')).toBe(1);
    res.end('ok');
  });
  expect((await fetch(`http://127.0.0.1:${port}/`)).status).toBe(200);
  await waitFor(
    () => ran.length,
    (n) => n === 1,
    { what: 'the cleanup' },
  );
});

test('pipelined requests with watched hooks: queued cleanups still run once when the connection drops', async () => {
  const ran: string[] = [];
  let seen = 0;
  const port = await listen((req, res) => {
    seen++;
    const hooks: EndHooks = { ends: undefined };
    watchEnds(hooks);
    res.on('close', () => runEndHooks(hooks));
    onRequestEnd(req, res, () => ran.push(`${req.url} admission`), hooks);
    onRequestEnd(req, res, () => ran.push(`${req.url} relay`), hooks);
  });
  const socket = connect(port, '127.0.0.1');
  await new Promise<void>((resolve) => socket.once('connect', resolve));
  socket.write(['/a', '/b'].map((p) => `GET ${p} HTTP/1.1\r\nHost: x\r\n\r\n`).join(''));
  await waitFor(
    () => seen,
    (n) => n === 2,
    { what: 'the two requests' },
  );
  socket.destroy();
  await waitFor(
    () => ran.length,
    (n) => n >= 4,
    { what: 'the cleanups' },
  );
  await new Promise((resolve) => setTimeout(resolve, 50));
  expect([...ran].sort()).toEqual(['/a admission', '/a relay', '/b admission', '/b relay']);
});

test('a held cleanup that throws: the others still run, and the first error is thrown after them', () => {
  const ran: string[] = [];
  const hooks: EndHooks = { ends: [] };
  hooks.ends!.push(
    () => ran.push('slot'),
    () => {
      throw new Error('relay');
    },
    () => ran.push('stream'),
    () => {
      throw new Error('second');
    },
  );
  expect(() => runEndHooks(hooks)).toThrow('relay');
  expect(ran).toEqual(['slot', 'stream']);
  runEndHooks(hooks); // once only
  expect(ran).toEqual(['slot', 'stream']);
});
