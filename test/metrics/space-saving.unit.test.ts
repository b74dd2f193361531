import fc from 'fast-check';
import { describe, expect, test } from 'vitest';
import { SpaceSaving } from '../../src/metrics/space-saving.js';

/** The exact reference: every key's true count. */
function exact(stream: readonly string[]): Map<string, number> {
  const counts = new Map<string, number>();
  for (const k of stream) counts.set(k, (counts.get(k) ?? 0) + 1);
  return counts;
}

const streams = fc.array(fc.constantFrom(...'abcdefghijklmnopqrstuvwxyz'.split('')), { maxLength: 400 });

describe('SpaceSaving', () => {
  test('holds every key exactly while the counters suffice', () => {
    const s = new SpaceSaving(3);
    for (const k of ['a', 'b', 'a', 'c', 'a', 'b']) s.offer(k);
    expect(s.top()).toEqual([
      { key: 'a', count: 3, error: 0 },
      { key: 'b', count: 2, error: 0 },
      { key: 'c', count: 1, error: 0 },
    ]);
    expect(s.total).toBe(6);
    expect(s.minCount).toBe(1);
  });

  test('a new key takes the smallest counter and inherits its count as error', () => {
    const s = new SpaceSaving(2);
    for (const k of ['a', 'a', 'b', 'c']) s.offer(k);
    expect(s.top()).toEqual([
      { key: 'a', count: 2, error: 0 },
      { key: 'c', count: 2, error: 1 },
    ]);
  });

  test('refuses a capacity that is not a positive integer', () => {
    expect(() => new SpaceSaving(0)).toThrow('capacity must be a positive integer');
    expect(() => new SpaceSaving(1.5)).toThrow('capacity must be a positive integer');
  });

  test('against the exact counts: bounded, heavy keys kept, overestimates within the error', () => {
    fc.assert(
      fc.property(streams, fc.integer({ min: 1, max: 8 }), (stream, k) => {
        const sketch = new SpaceSaving(k);
        for (const key of stream) sketch.offer(key);
        const truth = exact(stream);
        const top = sketch.top();
        expect(top.length).toBe(Math.min(k, truth.size));
        expect(sketch.total).toBe(stream.length);
        // The counts add up to the stream's length once the sketch is full, and never exceed it.
        expect(top.reduce((n, h) => n + h.count, 0)).toBe(stream.length);
        const held = new Map(top.map((h) => [h.key, h]));
        for (const [key, count] of truth) {
          if (count > stream.length / k) expect(held.has(key)).toBe(true);
          const h = held.get(key);
          if (h) {
            expect(h.count).toBeGreaterThanOrEqual(count);
            expect(h.count - h.error).toBeLessThanOrEqual(count);
            expect(h.error).toBeLessThanOrEqual(sketch.minCount);
          } else {
            expect(count).toBeLessThanOrEqual(sketch.minCount);
          }
        }
      }),
    );
  });
});
