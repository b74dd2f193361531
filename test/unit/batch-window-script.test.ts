// The batch script's wire format: what is sent for a batch, and how its flat reply is read back.
import { describe, expect, test } from 'vitest';
import { batchScriptArgs, parseBatchReply } from '../../src/store/batch-window-script.js';
import type { WindowRequest } from '../../src/store/window-store.js';

const w = (key: string, limit: number, periodMs: number, enforce = true): WindowRequest => ({
  key,
  limit,
  periodMs,
  enforce,
  cacheWhenSpent: false,
});

const batch = [[w('a', 2, 60_000), w('b', 5, 3_600_000, false)], [w('a', 2, 60_000)]];

describe('batchScriptArgs', () => {
  test('the key count, every key in request order, then the request count and each request', () => {
    expect(batchScriptArgs(batch)).toEqual([
      3,
      'a',
      'b',
      'a',
      2, // requests
      2, // first request: 2 windows
      2,
      60_000,
      1,
      5,
      3_600_000,
      0,
      1, // second request: 1 window
      2,
      60_000,
      1,
    ]);
  });
});

describe('parseBatchReply', () => {
  test('per request: blocked, then count and ttl per window; allowed means the window had room', () => {
    // First request counted (a: 2 of 2, b: 7 of 5 in a shadow window); second refused (a stays 2).
    const reply = [0, 2, 59_000, 7, 3_500_000, 1, 2, 58_000];
    expect(parseBatchReply(batch, reply, 1_000_000)).toEqual([
      [
        { count: 2, limit: 2, resetAtMs: 1_059_000, allowed: true },
        { count: 7, limit: 5, resetAtMs: 4_500_000, allowed: false },
      ],
      [{ count: 2, limit: 2, resetAtMs: 1_058_000, allowed: false }],
    ]);
  });

  test('a reply of the wrong length is an error, never a misread decision', () => {
    expect(() => parseBatchReply(batch, [0, 2, 59_000, 7, 3_500_000, 1, 2], 0)).toThrow(
      'batch script replied 7 values, not 8',
    );
    expect(() => parseBatchReply(batch, [], 0)).toThrow('batch script replied 0 values, not 8');
  });
});
