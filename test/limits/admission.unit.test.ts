import fc from 'fast-check';
import { describe, expect, test } from 'vitest';
import { Admission, type StreamBounds, type StreamHolder } from '../../src/limits/admission.js';
import { InFlight } from '../../src/limits/in-flight.js';

describe('InFlight', () => {
  test('a key holds at most `max`; a released slot can be taken again; empty keys are forgotten', () => {
    const slots = new InFlight();
    expect([1, 2, 3].map(() => slots.tryAcquire('a', 2))).toEqual([true, true, false]);
    expect(slots.tryAcquire('b', 2)).toBe(true);
    expect([slots.held('a'), slots.held('b'), slots.total, slots.keys]).toEqual([2, 1, 3, 2]);
    slots.release('a');
    expect(slots.tryAcquire('a', 2)).toBe(true);
    slots.release('a');
    slots.release('a');
    slots.release('b');
    expect([slots.total, slots.keys]).toEqual([0, 0]);
    // A stray release (never acquired) cannot push a count below zero or make room.
    slots.release('a');
    expect([slots.tryAcquire('a', 1), slots.tryAcquire('a', 1)]).toEqual([true, false]);
  });

  test('max 0 is no bound, but still counted', () => {
    const slots = new InFlight();
    for (let i = 0; i < 1000; i++) expect(slots.tryAcquire('k', 0)).toBe(true);
    expect(slots.held('k')).toBe(1000);
  });

  test('any sequence of acquires and releases leaves counts equal to the slots granted and not returned', () => {
    fc.assert(
      fc.property(
        fc.array(fc.tuple(fc.boolean(), fc.constantFrom('a', 'b', 'c')), { maxLength: 200 }),
        fc.integer({ min: 1, max: 5 }),
        (ops, max) => {
          const slots = new InFlight();
          const model = new Map<string, number>();
          for (const [take, key] of ops) {
            const held = model.get(key) ?? 0;
            if (take) {
              expect(slots.tryAcquire(key, max)).toBe(held < max);
              if (held < max) model.set(key, held + 1);
            } else if (held > 0) {
              slots.release(key);
              model.set(key, held - 1);
            }
            expect(slots.held(key)).toBe(model.get(key) ?? 0);
          }
          expect(slots.keys).toBe([...model.values()].filter((n) => n > 0).length);
        },
      ),
    );
  });
});

const bounds: StreamBounds = {
  maxStreamsPerSession: 3,
  maxStreamsPerIp: 4,
  streamConnections: 5,
};
const holder = (ip: string, session?: string, upstream = 'widget'): StreamHolder => ({
  ip,
  session,
  upstream,
});

describe('Admission', () => {
  test('requests per IP: the third in flight is refused with 429, one second to wait', () => {
    const admission = new Admission();
    expect(admission.admitRequest('10.0.0.1', 2)).toBeUndefined();
    expect(admission.admitRequest('10.0.0.1', 2)).toBeUndefined();
    expect(admission.admitRequest('10.0.0.1', 2)).toEqual({
      status: 429,
      code: 'too_many_requests_in_flight',
      decision: 'too_many_in_flight',
      message: 'More than 2 requests from this address are in progress. Retry when one has finished.',
      retryAfterSec: 1,
    });
    expect(admission.admitRequest('10.0.0.2', 2)).toBeUndefined();
    admission.releaseRequest('10.0.0.1');
    expect(admission.admitRequest('10.0.0.1', 2)).toBeUndefined();
  });

  test('streams: the session cap first, then the address, then the upstream budget (503)', () => {
    const admission = new Admission();
    for (let i = 0; i < 3; i++) expect(admission.admitStream(holder('ip1', 's1'), bounds)).toBeUndefined();
    expect(admission.admitStream(holder('ip1', 's1'), bounds)).toMatchObject({
      status: 429,
      code: 'too_many_streams',
      message: 'This visitor session already holds 3 open event streams. Close one before opening another.',
      retryAfterSec: 5,
    });
    expect(admission.admitStream(holder('ip1', 's2'), bounds)).toBeUndefined();
    expect(admission.admitStream(holder('ip1', 's2'), bounds)).toMatchObject({
      status: 429,
      message: 'This address already holds 4 open event streams. Close one before opening another.',
    });
    expect(admission.admitStream(holder('ip2'), bounds)).toBeUndefined();
    expect(admission.admitStream(holder('ip3'), bounds)).toMatchObject({
      status: 503,
      code: 'stream_capacity_reached',
      retryAfterSec: 5,
    });
    // Another upstream has its own budget.
    expect(admission.admitStream(holder('ip3', undefined, 'other'), bounds)).toBeUndefined();
  });

  test('a refused stream holds nothing: its session and address slots are given back', () => {
    const admission = new Admission();
    const full = { ...bounds, streamConnections: 1 };
    expect(admission.admitStream(holder('ip1', 's1'), full)).toBeUndefined();
    expect(admission.admitStream(holder('ip2', 's2'), full)?.status).toBe(503);
    expect(admission.streamsPerSession.held('s2')).toBe(0);
    expect(admission.streamsPerIp.held('ip2')).toBe(0);
    const byAddress = { ...bounds, maxStreamsPerIp: 1 };
    expect(admission.admitStream(holder('ip1', 's3'), byAddress)?.code).toBe('too_many_streams');
    expect(admission.streamsPerSession.held('s3')).toBe(0);
    admission.releaseStream(holder('ip1', 's1'));
    expect(admission.held).toBe(0);
  });

  test('streams and requests are counted apart: an address full of streams may still send requests', () => {
    const admission = new Admission();
    for (let i = 0; i < 4; i++) admission.admitStream(holder('ip1', `s${i}`), bounds);
    expect(admission.admitRequest('ip1', 2)).toBeUndefined();
  });
});
