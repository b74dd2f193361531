// The widget's Server-Sent Events stream, read through the real gateway while it stays open.
import type { ServerResponse } from 'node:http';
import { pino } from 'pino';
import { describe, expect, vi } from 'vitest';
import { request, type Dispatcher } from 'undici';
import { servicesConfigFrom } from '../../../src/cli/services-config.js';
import { loadConfigText } from '../../../src/rules/load.js';
import { openDatabase, type Db } from '../../../src/db/database.js';
import { createServiceApp, listen } from '../../../src/services/kit/app.js';
import { widgetErrors } from '../../../src/services/kit/errors.js';
import { buildService, openServiceDatabase } from '../../../src/services/registry.js';
import { addMessage } from '../../../src/services/widget/conversation.js';
import type { Sender } from '../../../src/services/widget/tables/messages.js';
import { insertSession, lastMessageSeq } from '../../../src/services/widget/tables/sessions.js';
import { MessageNotifier } from '../../../src/services/widget/message-notifier.js';
import { MessageSource } from '../../../src/services/widget/message-source.js';
import { MessageStreams, type StreamTiming } from '../../../src/services/widget/stream.js';
import { ensureWorkspace } from '../../../src/services/accounts/workspaces.js';
import { DEFAULT_CONFIG } from '../../helpers/default-config.js';
import { embeddedEnv, newDataDir } from '../../helpers/embedded.js';
import { embeddedTest } from '../../helpers/fixtures.js';
import { send, silentLogger } from '../../helpers/gateway.js';
import { waitFor } from '../../helpers/wait.js';

/** The streams' source, with the writes the tests make (as the routes do). */
class WidgetStore extends MessageSource {
  readonly #db: Db;
  constructor(db: Db) {
    super(db);
    this.#db = db;
  }
  createSession(id: string, workspaceId: number, _place: object): void {
    const place = { websiteId: null, pageUrl: null, locale: null };
    insertSession(this.#db, id, workspaceId, place, new Date().toISOString());
  }
  addMessage(sessionId: string, sender: Sender, body: string) {
    return addMessage(this.#db, sessionId, sender, body);
  }
  lastMessageId(sessionId: string): number {
    return lastMessageSeq(this.#db, sessionId);
  }
}

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

const json = (body: unknown) => ({ 'content-type': 'application/json', body: JSON.stringify(body) });

let sessions = 0;

const test = embeddedTest({ redis: true, workspaces: ['acme'] })
  .extend(
    'post',
    { scope: 'file' },
    ({ gateway }) =>
      async function post(path: string, token: string, status: number, body?: unknown): Promise<unknown> {
        const { 'content-type': type, body: text } =
          body === undefined ? { 'content-type': undefined, body: undefined } : json(body);
        const reply = await send(`${gateway.url()}${path}`, {
          method: 'POST',
          headers: { authorization: `Bearer ${token}`, ...(type ? { 'content-type': type } : {}) },
          body: text,
        });
        expect(reply.status, `${path}: ${reply.text}`).toBe(status);
        return reply.json();
      },
  )
  .extend(
    'init',
    { scope: 'file' },
    ({ gateway }) =>
      async function init(): Promise<{ token: string; session_id: string }> {
        const reply = await send(`${gateway.url()}/api/v1/widget/init`, {
          method: 'POST',
          ...{ headers: { 'content-type': 'application/json' }, body: JSON.stringify({ workspace: 'acme' }) },
        });
        return reply.json() as { token: string; session_id: string };
      },
  )
  .extend(
    'say',
    { scope: 'file' },
    ({ post }) =>
      async function say(token: string, body: string): Promise<StreamedMessage> {
        return ((await post('/api/v1/widget/messages', token, 201, { body })) as { message: StreamedMessage })
          .message;
      },
  )
  /** Opens the stream through the gateway and returns once its headers have arrived. */
  .extend(
    'openStream',
    { scope: 'file' },
    ({ gateway }) =>
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
      },
  )
  /** Streams of a MessageStreams of its own, served by a bare service app: POST /stream/<session>[?after=n]. */
  .extend(
    'streamApp',
    { scope: 'file' },
    ({ db }) =>
      async function streamApp(timing: StreamTiming) {
        const store = new WidgetStore(db);
        const notifier = new MessageNotifier();
        const streams = new MessageStreams(store, notifier, { timing });
        const app = createServiceApp({ logger: silentLogger, errors: widgetErrors, bodyLimit: 1024 });
        app.addHook('preClose', async () => streams.endAll());
        /** The server side of each stream opened, in order: a test sees its writes back up. */
        const responses: ServerResponse[] = [];
        app.post<{ Params: { session: string }; Querystring: { after?: string } }>(
          '/stream/:session',
          async (request, reply) => {
            responses.push(reply.raw);
            streams.open(reply, request.params.session, Number(request.query.after ?? 0));
            return reply;
          },
        );
        const url = await listen(app, '127.0.0.1', 0);
        const open = async (sessionId: string, after = 0) =>
          new EventReader(
            (await request(`${url}/stream/${sessionId}?after=${after}`, { method: 'POST' })).body,
          );
        return { store, notifier, streams, app, url, open, responses };
      },
  )
  .extend(
    'newSession',
    { scope: 'file' },
    ({ db }) =>
      function newSession(store: WidgetStore): string {
        const id = `shared-${++sessions}-${Date.now()}`;
        store.createSession(id, ensureWorkspace(db, 'acme').id, {
          websiteId: undefined,
          pageUrl: undefined,
          locale: undefined,
        });
        return id;
      },
  );

describe('POST /api/v1/widget/messages/stream', () => {
  test('delivers a message through the gateway while the response stays open (no buffering)', async ({
    init,
    say,
    openStream,
  }) => {
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

  test('delivers the system message of request-human and a message another process stored', async ({
    post,
    init,
    openStream,
    dataDir,
  }) => {
    const { token, session_id } = await init();
    const { events } = await openStream(token);
    try {
      const human = (await post('/api/v1/widget/request-human', token, 200)) as { message: StreamedMessage };
      expect(await events.next()).toEqual({ id: String(human.message.id), message: human.message });
      expect(human.message.body).toBe('A team member will join shortly.');

      // An agent's reply written by another connection to the file: no in-process notification, the poll finds it.
      const other = openDatabase(dataDir);
      const reply = addMessage(other, session_id, 'agent', 'Hi, I am Sam.');
      other.close();
      expect(await events.next()).toEqual({ id: String(reply.id), message: reply });
    } finally {
      events.close();
    }
  });

  test('a reconnecting client gets what it missed, from Last-Event-ID or `after`', async ({
    init,
    say,
    openStream,
  }) => {
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

  test('a bad cursor is a 422; the stream ends when the visitor is erased', async ({
    init,
    openStream,
    gateway,
  }) => {
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
  test('a stream unsubscribes when its client leaves, and closing the service ends the open ones', async ({
    db,
  }) => {
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

describe('one shared poller per service', () => {
  test('N open streams cost one read per tick, not two per stream; it runs only while a stream is open', async ({
    streamApp,
    newSession,
  }) => {
    const pollMs = 25;
    // The poller's clock is the test's: ticks happen when it advances, and only then.
    vi.useFakeTimers({ toFake: ['setInterval', 'clearInterval'] });
    const { store, streams, app, open } = await streamApp({ pollMs, pingMs: 60_000 });
    const polls = vi.spyOn(store, 'pollStreams');
    const ownReads = vi.spyOn(store, 'messagesAfter');
    try {
      expect(streams.status).toEqual({ streams: 0, polling: false });
      const [a, b, c] = [newSession(store), newSession(store), newSession(store)];
      const readers = [await open(a), await open(a), await open(b), await open(b), await open(c)];
      expect(streams.status).toEqual({ streams: 5, polling: true });
      // Each stream read its own backlog once, when it opened; from then on only the shared poll reads.
      expect(ownReads).toHaveBeenCalledTimes(5);
      polls.mockClear();
      ownReads.mockClear();
      vi.advanceTimersByTime(10 * pollMs);
      expect(polls).toHaveBeenCalledTimes(10);
      expect(ownReads).not.toHaveBeenCalled();
      // Every call asked about the three followed sessions at once.
      for (const [, sessionIds] of polls.mock.calls) expect([...sessionIds].sort()).toEqual([a, b, c].sort());

      // Messages stored without a notification (as another process would) reach exactly their
      // session's streams, at the next tick.
      const toA = store.addMessage(a, 'agent', 'for a');
      const toC = store.addMessage(c, 'agent', 'for c');
      vi.advanceTimersByTime(pollMs);
      expect(await readers[0]!.next()).toEqual({ id: String(toA.id), message: toA });
      expect(await readers[1]!.next()).toEqual({ id: String(toA.id), message: toA });
      expect(await readers[4]!.next()).toEqual({ id: String(toC.id), message: toC });
      const toB = store.addMessage(b, 'agent', 'for b');
      vi.advanceTimersByTime(pollMs);
      for (const reader of readers.slice(2, 4))
        expect(await reader.next()).toEqual({ id: String(toB.id), message: toB });
      expect(ownReads).not.toHaveBeenCalled();

      for (const reader of readers) reader.close();
      await waitFor(
        () => streams.status,
        (status) => status.streams === 0,
        { what: 'the streams to close' },
      );
      expect(streams.status.polling).toBe(false);
      // No timer is left to tick: however far the clock goes, nothing polls.
      expect(vi.getTimerCount()).toBe(0);
      polls.mockClear();
      vi.advanceTimersByTime(4 * pollMs);
      expect(polls).not.toHaveBeenCalled();

      // The next stream starts the poller again.
      const again = await open(a, store.lastMessageId(a));
      expect(streams.status).toEqual({ streams: 1, polling: true });
      const later = store.addMessage(a, 'visitor', 'still here');
      vi.advanceTimersByTime(pollMs);
      expect(await again.next()).toEqual({ id: String(later.id), message: later });
      again.close();
    } finally {
      vi.useRealTimers();
      await app.close();
    }
  });

  test('a notification delivers at once; a session erased by another process ends its streams', async ({
    streamApp,
    newSession,
    dataDir,
  }) => {
    const { store, notifier, app, open } = await streamApp({ pollMs: 60_000, pingMs: 60_000 });
    try {
      const session = newSession(store);
      const reader = await open(session);
      const message = store.addMessage(session, 'visitor', 'notified');
      notifier.notify(session);
      expect(await reader.next()).toEqual({ id: String(message.id), message });
    } finally {
      await app.close();
    }

    const polled = await streamApp({ pollMs: 25, pingMs: 60_000 });
    try {
      const session = newSession(polled.store);
      const reader = await polled.open(session);
      const other = openDatabase(dataDir);
      other.prepare('DELETE FROM widget_sessions WHERE id = ?').run(session);
      other.close();
      // No notification in this process: the shared poll's read finds the session gone.
      expect(await reader.next()).toBeUndefined();
      expect(polled.streams.status).toEqual({ streams: 0, polling: false });
    } finally {
      await polled.app.close();
    }
  });

  test('a client slower than its messages catches up in order, nothing lost and nothing twice', async ({
    streamApp,
    newSession,
  }) => {
    const { store, notifier, app, url, responses } = await streamApp({ pollMs: 20, pingMs: 60_000 });
    try {
      const session = newSession(store);
      const { res, events } = await (async () => {
        const res = await request(`${url}/stream/${session}`, { method: 'POST' });
        return { res, events: new EventReader(res.body) };
      })();
      expect(res.statusCode).toBe(200);
      // Several megabytes while the client reads nothing: the server's writes back up.
      const body = 'x'.repeat(3900);
      const sent = [];
      for (let i = 0; i < 1500; i++) {
        sent.push(store.addMessage(session, 'agent', `${i} ${body}`).id);
        if (i % 100 === 0) notifier.notify(session);
      }
      // Not one read yet: the server's writes back up until its response waits for 'drain'.
      await waitFor(
        () => responses[0]!.writableNeedDrain,
        (backedUp) => backedUp,
        { what: "the stream's writes to back up" },
      );
      const got = [];
      for (let i = 0; i < sent.length; i++) got.push(Number((await events.next())!.id));
      expect(got).toEqual(sent);
      events.close();
    } finally {
      await app.close();
    }
  });
});

describe('a failing database never takes the process down', () => {
  /** A widget service of its own (buildService), listening, with its log kept. */
  async function throwawayService() {
    const dataDir = newDataDir();
    const config = servicesConfigFrom(
      loadConfigText(DEFAULT_CONFIG, 'gateway.yaml', embeddedEnv(dataDir)).config,
    );
    const logged: { msg: string; err?: { message: string } }[] = [];
    const logger = pino({ level: 'error' }, { write: (line: string) => logged.push(JSON.parse(line)) });
    const own = openServiceDatabase(config, logger);
    ensureWorkspace(own, 'acme');
    const app = await buildService('widget', { db: own, config, logger });
    const url = await listen(app, '127.0.0.1', 0);
    const call = (path: string, token?: string, body: unknown = {}) =>
      send(`${url}${path}`, {
        method: 'POST',
        headers: {
          'content-type': 'application/json',
          ...(token ? { authorization: `Bearer ${token}` } : {}),
        },
        body: JSON.stringify(body),
      });
    const { token } = (await call('/api/v1/widget/init', undefined, { workspace: 'acme' })).json() as {
      token: string;
    };
    const openStream = async () => {
      const res = await request(`${url}/api/v1/widget/messages/stream`, {
        method: 'POST',
        headers: { authorization: `Bearer ${token}` },
      });
      expect(res.statusCode).toBe(200);
      return new EventReader(res.body);
    };
    return { db: own, app, logged, call, token, openStream };
  }

  test('the database closed under open streams: the poll fails, is logged, and ends them', async () => {
    const service = await throwawayService();
    try {
      const events = await service.openStream();
      const message = (
        await service.call('/api/v1/widget/messages', service.token, { body: 'hi' })
      ).json() as {
        message: StreamedMessage;
      };
      expect(await events.next()).toEqual({ id: String(message.message.id), message: message.message });
      service.db.close();
      // Before, the poll's timer threw "The database connection is not open" out of the process.
      expect(await events.next()).toBeUndefined();
      expect(service.logged).toContainEqual(
        expect.objectContaining({
          msg: 'the widget message streams failed to poll; ending them',
          err: expect.objectContaining({ message: 'The database connection is not open' }),
        }),
      );
    } finally {
      await service.app.close();
    }
  });

  test("reading the stream's messages fails: the message's POST still succeeds, the stream ends, logged", async () => {
    const service = await throwawayService();
    const failure = () => {
      throw Object.assign(new Error('disk I/O error'), { code: 'SQLITE_IOERR' });
    };
    try {
      const events = await service.openStream();
      const polls = vi.spyOn(MessageSource.prototype, 'pollStreams').mockImplementation(failure);
      const reads = vi.spyOn(MessageSource.prototype, 'messagesAfter').mockImplementation(failure);
      const reply = await service.call('/api/v1/widget/messages', service.token, { body: 'stored anyway' });
      expect(reply.status).toBe(201);
      expect(await events.next()).toBeUndefined();
      polls.mockRestore();
      reads.mockRestore();
      expect(service.logged).toContainEqual(
        expect.objectContaining({ err: expect.objectContaining({ message: 'disk I/O error' }) }),
      );
      const page = await service.call('/api/v1/widget/conversation/messages', service.token);
      expect((page.json() as { messages: StreamedMessage[] }).messages).toEqual([
        (reply.json() as { message: StreamedMessage }).message,
      ]);
      // The service goes on: a new stream works.
      const again = await service.openStream();
      const next = (
        await service.call('/api/v1/widget/messages', service.token, { body: 'again' })
      ).json() as {
        message: StreamedMessage;
      };
      expect(await again.next()).toEqual({ id: String(next.message.id), message: next.message });
      again.close();
    } finally {
      vi.restoreAllMocks();
      await service.app.close();
    }
  });
});
