// The widget's Server-Sent Events stream, read through the real gateway while it stays open.
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { request, type Dispatcher } from 'undici';
import { openDatabase, type Db } from '../src/db/database.js';
import type { Gateway } from '../src/http/gateway.js';
import { createServiceApp, listen } from '../src/upstreams/app.js';
import { widgetErrors } from '../src/upstreams/errors.js';
import { WidgetStore } from '../src/upstreams/widget/store.js';
import { MessageNotifier, MessageStreams } from '../src/upstreams/widget/stream.js';
import { ensureWorkspace } from '../src/upstreams/workspaces.js';
import { newDataDir, startEmbeddedGateway } from './helpers/embedded.js';
import { send, silentLogger } from './helpers/gateway.js';
import { RedisServer } from './helpers/redis-server.js';
import { waitFor } from './helpers/resilience-wait.js';

interface StreamedMessage {
  id: number;
  sender: string;
  body: string;
  created_at: string;
}

/** Reads `event: message` events off an open response body, without waiting for its end. */
class EventReader {
  #buffer = '';
  readonly #chunks: AsyncIterator<Buffer>;
  /** Every field line seen, comments and `retry:` included. */
  readonly lines: string[] = [];

  constructor(private readonly body: Dispatcher.ResponseData['body']) {
    this.#chunks = (body as AsyncIterable<Buffer>)[Symbol.asyncIterator]();
  }

  /** The next message event; undefined once the stream has ended. */
  async next(): Promise<{ id: string; message: StreamedMessage } | undefined> {
    for (;;) {
      const end = this.#buffer.indexOf('\n\n');
      if (end >= 0) {
        const block = this.#buffer.slice(0, end).split('\n');
        this.#buffer = this.#buffer.slice(end + 2);
        this.lines.push(...block);
        const field = (name: string) => block.find((l) => l.startsWith(`${name}: `))?.slice(name.length + 2);
        if (field('event') === 'message') {
          return { id: field('id')!, message: JSON.parse(field('data')!) as StreamedMessage };
        }
        continue;
      }
      const { value, done } = await this.#chunks.next();
      if (done) return undefined;
      this.#buffer += value.toString('utf8');
    }
  }

  close(): void {
    this.body.destroy();
  }
}

let redis: RedisServer;
let gateway: Gateway;
let dataDir: string;
let db: Db;

beforeAll(async () => {
  redis = await RedisServer.start();
  dataDir = newDataDir();
  db = openDatabase(dataDir);
  ensureWorkspace(db, 'acme');
  gateway = await startEmbeddedGateway(dataDir, { REDIS_URL: redis.url });
});
afterAll(async () => {
  await gateway?.close();
  db?.close();
  await redis?.kill();
});

const json = (body: unknown) => ({ 'content-type': 'application/json', body: JSON.stringify(body) });

async function post(path: string, token: string, body?: unknown): Promise<unknown> {
  const { 'content-type': type, body: text } =
    body === undefined ? { 'content-type': undefined, body: undefined } : json(body);
  const reply = await send(`${gateway.url()}${path}`, {
    method: 'POST',
    headers: { authorization: `Bearer ${token}`, ...(type ? { 'content-type': type } : {}) },
    body: text,
  });
  expect(reply.status, `${path}: ${reply.text}`).toBeLessThan(300);
  return reply.json();
}

async function init(): Promise<{ token: string; session_id: string }> {
  const reply = await send(`${gateway.url()}/api/v1/widget/init`, {
    method: 'POST',
    ...{ headers: { 'content-type': 'application/json' }, body: JSON.stringify({ workspace: 'acme' }) },
  });
  return reply.json() as { token: string; session_id: string };
}

async function say(token: string, body: string): Promise<StreamedMessage> {
  return ((await post('/api/v1/widget/messages', token, { body })) as { message: StreamedMessage }).message;
}

/** Opens the stream through the gateway and returns once its headers have arrived. */
async function openStream(token: string, headers: Record<string, string> = {}, body?: unknown) {
  const res = await request(`${gateway.url()}/api/v1/widget/messages/stream`, {
    method: 'POST',
    headers: {
      authorization: `Bearer ${token}`,
      ...(body === undefined ? {} : { 'content-type': 'application/json' }),
      ...headers,
    },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  return { res, events: new EventReader(res.body) };
}

describe('POST /api/v1/widget/messages/stream', () => {
  test('delivers a message through the gateway while the response stays open (no buffering)', async () => {
    const { token } = await init();
    await say(token, 'before the stream'); // not replayed: without a cursor the stream starts now
    const { res, events } = await openStream(token);
    try {
      expect(res.statusCode).toBe(200);
      expect(res.headers['content-type']).toBe('text/event-stream');
      expect(res.headers['cache-control']).toBe('no-cache');
      expect(res.headers['x-ratelimit-limit']).toBe('300');

      const sent = await say(token, 'Hello there');
      const received = await events.next();
      expect(received).toEqual({ id: String(sent.id), message: sent });
      expect(events.lines).toContain('retry: 2000');

      const second = await say(token, 'And again');
      expect(await events.next()).toEqual({ id: String(second.id), message: second });
    } finally {
      events.close();
    }
  });

  test('delivers the system message of request-human and a message another process stored', async () => {
    const { token, session_id } = await init();
    const { events } = await openStream(token);
    try {
      const human = (await post('/api/v1/widget/request-human', token)) as { message: StreamedMessage };
      expect(await events.next()).toEqual({ id: String(human.message.id), message: human.message });
      expect(human.message.body).toBe('A team member will join shortly.');

      // An agent's reply written by another connection to the file: no in-process notification, the poll finds it.
      const other = openDatabase(dataDir);
      const reply = other
        .prepare(
          `INSERT INTO widget_messages (session_id, sender, body, created_at) VALUES (?, 'agent', ?, ?)
           RETURNING id, sender, body, created_at`,
        )
        .get(session_id, 'Hi, I am Sam.', new Date().toISOString()) as StreamedMessage;
      other.close();
      expect(await events.next()).toEqual({ id: String(reply.id), message: reply });
    } finally {
      events.close();
    }
  });

  test('a reconnecting client gets what it missed, from Last-Event-ID or `after`', async () => {
    const { token } = await init();
    const first = await say(token, 'one');
    const second = await say(token, 'two');
    const third = await say(token, 'three');

    const resumed = await openStream(token, { 'last-event-id': String(first.id) });
    try {
      expect(await resumed.events.next()).toEqual({ id: String(second.id), message: second });
      expect(await resumed.events.next()).toEqual({ id: String(third.id), message: third });
    } finally {
      resumed.events.close();
    }
    const replay = await openStream(token, {}, { after: 0 });
    try {
      for (const m of [first, second, third])
        expect(await replay.events.next()).toEqual({ id: String(m.id), message: m });
    } finally {
      replay.events.close();
    }
  });

  test('a bad cursor is a 422; the stream ends when the visitor is erased', async () => {
    const { token } = await init();
    for (const [headers, body, fields] of [
      [
        { 'last-event-id': 'abc' },
        undefined,
        { 'Last-Event-ID': ['The Last-Event-ID header must be a message id.'] },
      ],
      [{}, { after: -1 }, { after: ['The after field must be a message id.'] }],
    ] as const) {
      const { res } = await openStream(token, headers, body);
      expect(res.statusCode).toBe(422);
      expect(await res.body.json()).toEqual({
        error: { code: 'validation_failed', message: 'The given data was invalid.', fields },
      });
    }

    const { events } = await openStream(token);
    try {
      const erased = await send(`${gateway.url()}/api/v1/widget/me`, {
        method: 'DELETE',
        headers: { authorization: `Bearer ${token}` },
      });
      expect(erased.json()).toEqual({ erased: true });
      expect(await events.next()).toBeUndefined();
    } finally {
      events.close();
    }
  });
});

describe('MessageStreams', () => {
  test('a stream unsubscribes when its client leaves, and closing the service ends the open ones', async () => {
    const store = new WidgetStore(db);
    const sessionId = `stream-${Date.now()}`;
    store.createSession(sessionId, ensureWorkspace(db, 'acme').id, {
      websiteId: undefined,
      pageUrl: undefined,
      locale: undefined,
    });
    const notifier = new MessageNotifier();
    const streams = new MessageStreams(store, notifier);
    const app = createServiceApp({ logger: silentLogger, errors: widgetErrors, bodyLimit: 1024 });
    app.addHook('preClose', async () => streams.endAll());
    app.post('/stream', async (_request, reply) => {
      streams.open(reply, sessionId, 0);
      return reply;
    });
    const url = await listen(app, '127.0.0.1', 0);
    try {
      const first = new EventReader((await request(`${url}/stream`, { method: 'POST' })).body);
      expect(notifier.subscribers(sessionId)).toBe(1);
      const message = store.addMessage(sessionId, 'agent', 'Welcome!');
      notifier.notify(sessionId);
      expect(await first.next()).toEqual({ id: String(message.id), message });
      first.close();
      await waitFor(
        () => notifier.subscribers(sessionId),
        (n) => n === 0,
        { what: 'the stream to unsubscribe' },
      );

      const second = new EventReader((await request(`${url}/stream`, { method: 'POST' })).body);
      expect(await second.next()).toEqual({ id: String(message.id), message });
      await app.close();
      expect(await second.next()).toBeUndefined();
      expect(notifier.subscribers(sessionId)).toBe(0);
    } finally {
      await app.close();
    }
  });
});
