// The interceptor's handler plumbing against a scripted dispatch (no sockets): which answers
// reach the caller's handler, what is sent again, and how the limiter key is read from every
// header shape undici accepts.
import { Readable } from 'node:stream';
import type { Dispatcher } from 'undici';
import { describe, expect, test } from 'vitest';
import { SharedLimits } from '../../src/limiter-state.js';
import { tollgateRateLimit } from '../../src/undici.js';
import { ManualClock } from '../helpers/clocks.js';

const T0 = 1_800_000_000_000;

type Answer = { readonly status: number; readonly headers: Record<string, string>; readonly body: string };

const controller: Dispatcher.DispatchController = {
  aborted: false,
  paused: false,
  reason: null,
  abort() {},
  pause() {},
  resume() {},
};

/** A dispatch that answers each request with the next scripted answer, at once. */
function scripted(answers: Answer[]) {
  const sent: Dispatcher.DispatchOptions[] = [];
  const dispatch: Dispatcher.Dispatch = (opts, handler) => {
    sent.push(opts);
    const answer = answers.shift()!;
    queueMicrotask(() => {
      handler.onRequestStart?.(controller, {});
      handler.onResponseStart?.(controller, answer.status, answer.headers, '');
      handler.onResponseData?.(controller, Buffer.from(answer.body));
      handler.onResponseEnd?.(controller, {});
    });
    return true;
  };
  return { dispatch, sent };
}

/** What the caller's handler saw. */
function recording() {
  const seen: string[] = [];
  let finish: () => void = () => undefined;
  const done = new Promise<void>((resolve) => (finish = resolve));
  const handler: Dispatcher.DispatchHandler = {
    onRequestStart: () => seen.push('start'),
    onResponseStart: (_c, status) => seen.push(`status ${status}`),
    onResponseData: (_c, chunk) => seen.push(`data ${chunk.toString()}`),
    onResponseEnd: () => (seen.push('end'), finish()),
    onResponseError: (_c, err) => (seen.push(`error ${err.message}`), finish()),
  };
  return { handler, seen, done };
}

const refused: Answer = {
  status: 429,
  headers: { 'retry-after': '60', 'x-ratelimit-remaining': '0', 'x-ratelimit-limit': '30' },
  body: 'refused',
};
const ok: Answer = {
  status: 200,
  headers: { 'x-ratelimit-remaining': '5', 'x-ratelimit-limit': '30' },
  body: 'ok',
};

const settle = async () => {
  for (let i = 0; i < 10; i++) await new Promise((r) => setImmediate(r));
};

describe('tollgateRateLimit', () => {
  test('a 429 is held back from the handler; after Retry-After the request is sent again', async () => {
    const clock = new ManualClock(T0);
    const { dispatch, sent } = scripted([refused, ok]);
    const { handler, seen, done } = recording();
    const opts = { origin: 'http://gw.test', path: '/x', method: 'POST', body: 'payload' } as const;
    expect(tollgateRateLimit({ clock })(dispatch)(opts, handler)).toBe(true);
    await settle();
    expect(clock.sleeping).toEqual([T0 + 60_000]);
    expect(sent).toHaveLength(1);
    await clock.advance(60_000);
    await done;
    expect(sent.map((o) => [o.method, o.body])).toEqual([
      ['POST', 'payload'],
      ['POST', 'payload'],
    ]);
    expect(seen).toEqual(['start', 'start', 'status 200', 'data ok', 'end']);
  });

  test('a streamed body cannot be sent again: its 429 reaches the handler', async () => {
    const clock = new ManualClock(T0);
    const { dispatch } = scripted([refused]);
    const { handler, seen, done } = recording();
    const body = Readable.from(['x']);
    tollgateRateLimit({ clock })(dispatch)(
      { origin: 'http://gw.test', path: '/x', method: 'POST', body },
      handler,
    );
    await done;
    expect(seen).toEqual(['start', 'status 429', 'data refused', 'end']);
  });

  test('the credential is read from every header shape: object, flat list, iterable', async () => {
    const clock = new ManualClock(T0);
    const limits = new SharedLimits({ clock });
    const keys: string[] = [];
    const interceptor = tollgateRateLimit({
      limits,
      limiterKey: ({ url, header }) => {
        const key = `${url.origin} ${header('authorization')}`;
        keys.push(key);
        return key;
      },
    });
    const shapes: Dispatcher.DispatchOptions['headers'][] = [
      { Authorization: 'Bearer a' },
      ['content-type', 'text/plain', 'authorization', 'Bearer b'],
      new Map([['AUTHORIZATION', 'Bearer c']]),
      undefined,
    ];
    for (const headers of shapes) {
      const { dispatch } = scripted([ok]);
      const { handler, done } = recording();
      interceptor(dispatch)({ origin: 'http://gw.test', path: '/', method: 'GET', headers }, handler);
      await done;
    }
    expect(keys).toEqual([
      'http://gw.test Bearer a',
      'http://gw.test Bearer b',
      'http://gw.test Bearer c',
      'http://gw.test undefined',
    ]);
  });

  test('an abort while paused reaches the handler as an error, and nothing is dispatched', async () => {
    const clock = new ManualClock(T0);
    const limits = new SharedLimits({ clock });
    await limits.acquire('http://gw.test');
    limits.settle('http://gw.test', 200, {
      limit: 30,
      remaining: 0,
      resetAtMs: T0 + 3_600_000,
      retryAfterMs: undefined,
    });
    const { dispatch, sent } = scripted([ok]);
    const { handler, seen, done } = recording();
    const abort = new AbortController();
    const opts = { origin: 'http://gw.test', path: '/', method: 'GET', signal: abort.signal };
    tollgateRateLimit({ limits })(dispatch)(opts as Dispatcher.DispatchOptions, handler);
    await settle();
    expect(clock.sleeping).toEqual([T0 + 3_600_000]);
    abort.abort(new Error('stop'));
    await done;
    expect(seen).toEqual(['error stop']);
    expect(sent).toEqual([]);
  });
});
