// The batch script's wire format: what is sent for a batch, and how its flat reply is read back.
import { describe, expect, test } from 'vitest';
import { batchScriptArgs, parseBatchReply } from '../../src/store/batch-window-script.js';
import { noRuns, RUN_MARK, runLengths } from '../../src/store/batch-window-runs.js';
import type { WindowRequest } from '../../src/store/window-store.js';

const w = (key: string, limit: number, periodMs: number, enforce = true, cost?: number): WindowRequest => ({
  key,
  limit,
  periodMs,
  enforce,
  cacheWhenSpent: false,
  ...(cost === undefined ? {} : { cost }),
});

const batch = [[w('a', 2, 60_000), w('b', 5, 3_600_000, false)], [w('a', 2, 60_000)]];

describe('batchScriptArgs', () => {
  test('each distinct window spec once (its key in KEYS), then each request by its specs', () => {
    expect(batchScriptArgs(batch)).toEqual([
      2,
      'a', // spec 1's key
      'b', // spec 2's key
      2, // entries: two requests, different
      '', // the time: Redis' own
      -2, // specs: 2, each on a key of its own (negative)
      2, // spec 1: limit, period, mode (fixed, enforced), cost (absent is 1)
      60_000,
      '1',
      1,
      5, // spec 2: a shadow window
      3_600_000,
      '0',
      1,
      -2, // first request: 2 windows, specs 1 and 2
      1,
      2,
      1, // second request: one window, spec 1
    ]);
  });

  test("a window's cost (hits to add) follows its mode", () => {
    expect(batchScriptArgs([[w('a', 10, 1000, true, 4)]])).toEqual([1, 'a', 1, '', -1, 10, 1000, '1', 4, 1]);
  });

  test('a batch of many requests on one key sends the key and its spec once', () => {
    const same = Array.from({ length: 5 }, () => [w('k', 100, 60_000)]);
    expect(batchScriptArgs(same, undefined, noRuns(same))).toEqual([
      1,
      'k',
      5,
      '',
      -1,
      100,
      60_000,
      '1',
      1,
      1,
      1,
      1,
      1,
      1,
    ]);
  });

  test('identical requests in a row go as one run: RUN_MARK + n, then the request once', () => {
    const a = w('a', 9, 60_000);
    const b = w('b', 5, 1000, false);
    const batch = [[a, b], [{ ...a }, { ...b }], [a, b], [a], [a], [b, a]];
    expect(runLengths(batch)).toEqual([3, 2, 1]);
    expect(batchScriptArgs(batch)).toEqual([
      ...[2, 'a', 'b'],
      ...[3, '', -2],
      ...[9, 60_000, '1', 1],
      ...[5, 1000, '0', 1],
      ...[RUN_MARK + 3, -2, 1, 2], // three requests of windows a and b
      ...[RUN_MARK + 2, 1], // two of a alone
      ...[-2, 2, 1], // b then a: another request
    ]);
  });

  test('no run across another cost, a ban, or two windows on one key', () => {
    const a = w('a', 9, 60_000);
    const banned: WindowRequest = {
      ...a,
      ban: { key: 'ban', strikesKey: 'strikes', after: 2, withinMs: 1000, forMs: 1000, span: 1 },
    };
    expect(runLengths([[a], [w('a', 9, 60_000, true, 2)], [banned], [banned], [a, a], [a, a], [a]])).toEqual([
      1, 1, 1, 1, 1, 1, 1,
    ]);
  });

  test('another cost, shadow flag or algorithm on the same key is a spec of its own', () => {
    const sliding: WindowRequest = { ...w('s', 3, 1000), algorithm: 'sliding' };
    const bucket: WindowRequest = { ...w('t', 3, 1000, false), algorithm: 'token-bucket', rate: 2 };
    expect(
      batchScriptArgs(
        [[w('k', 9, 60_000)], [w('k', 9, 60_000, true, 0)], [w('k', 9, 60_000, false)], [sliding, bucket]],
        5,
      ),
    ).toEqual([
      5,
      ...['k', 'k', 'k', 's', 't'],
      4,
      5,
      5, // specs: three share key k (positive)
      ...[9, 60_000, '1', 1],
      ...[9, 60_000, '1', 0],
      ...[9, 60_000, '0', 1],
      ...[3, 1000, 's1', 1],
      ...[3, 1000, 'b0', 1, 2],
      ...[1, 2, 3, -2, 4, 5],
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

  test('with a cost, the window had room when the count before plus the cost is within the limit', () => {
    const costly = [[w('a', 10, 60_000, true, 4)], [w('a', 10, 60_000, true, 4)]];
    // First: 6 → 10 (counted, room exactly); second: refused at 10, not counted.
    expect(parseBatchReply(costly, [0, 10, 60_000, 1, 10, 59_000], 0, noRuns(costly))).toEqual([
      [{ count: 10, limit: 10, resetAtMs: 60_000, allowed: true }],
      [{ count: 10, limit: 10, resetAtMs: 59_000, allowed: false }],
    ]);
    // Refused with room for fewer hits than the cost: 8 of 10 cannot take 4.
    expect(parseBatchReply([[w('a', 10, 60_000, true, 4)]], [1, 8, 30_000], 0)).toEqual([
      [{ count: 8, limit: 10, resetAtMs: 30_000, allowed: false }],
    ]);
  });

  test('a run: the first `counted` requests counted, each seeing the hits before it', () => {
    const costly = [[w('a', 10, 60_000, true, 4)], [w('a', 10, 60_000, true, 4)]];
    // The same two requests as a run: one counted; the key held 6 with 59,000 ms left.
    expect(parseBatchReply(costly, [1, 0, 6, 59_000], 0)).toEqual([
      [{ count: 10, limit: 10, resetAtMs: 59_000, allowed: true }],
      [{ count: 10, limit: 10, resetAtMs: 59_000, allowed: false }],
    ]);
    // A new key (PTTL -2): counted requests see a whole period; none counted, as the script says.
    const three = Array.from({ length: 3 }, () => [w('a', 1, 60_000)]);
    expect(parseBatchReply(three, [1, 0, 0, -2], 5).map((r) => r[0])).toEqual([
      { count: 1, limit: 1, resetAtMs: 60_005, allowed: true },
      { count: 1, limit: 1, resetAtMs: 60_005, allowed: false },
      { count: 1, limit: 1, resetAtMs: 60_005, allowed: false },
    ]);
  });

  test('a sliding run and a token-bucket run, from their state before and the time in Redis', () => {
    const sliding: WindowRequest = { ...w('s', 4, 1000), algorithm: 'sliding' };
    const slid = Array.from({ length: 3 }, () => [sliding]);
    // Window 5 (5,000–6,000) at 5,500 holding 1, the previous window 2: used ⌈2 × 500 / 1000⌉ + 1 = 2.
    expect(parseBatchReply(slid, [2, 5_500, 5, 1, 2], 100)).toEqual([
      // 3 of 4: another passes now. 4 of 4: the next passes once the previous window's weight
      // ⌈2 × (1000 − e) / 1000⌉ reaches 0, at the window's end (6,000: 500 ms on).
      [{ count: 3, limit: 4, resetAtMs: 100 + 1_500, allowed: true, retryAtMs: 100 }],
      [{ count: 4, limit: 4, resetAtMs: 100 + 1_500, allowed: true, retryAtMs: 100 + 500 }],
      [{ count: 4, limit: 4, resetAtMs: 100 + 1_500, allowed: false, retryAtMs: 100 + 500 }],
    ]);
    const bucket: WindowRequest = { ...w('t', 2, 1000), algorithm: 'token-bucket', rate: 4 };
    const drained = Array.from({ length: 3 }, () => [bucket]);
    // A full bucket (TAT = now = 9,000): two tokens of 250 ms each, then empty.
    expect(parseBatchReply(drained, [2, 9_000, 9_000, 0], 0)).toEqual([
      [{ count: 1, limit: 2, resetAtMs: 250, allowed: true, retryAtMs: 0 }],
      [{ count: 2, limit: 2, resetAtMs: 500, allowed: true, retryAtMs: 250 }],
      [{ count: 2, limit: 2, resetAtMs: 500, allowed: false, retryAtMs: 250 }],
    ]);
  });

  test('a reply of the wrong length is an error, never a misread decision', () => {
    expect(() => parseBatchReply(batch, [0, 2, 59_000, 7, 3_500_000, 1, 2], 0)).toThrow(
      'batch script replied 7 values, not 8',
    );
    expect(() => parseBatchReply(batch, [], 0)).toThrow('batch script replied 0 values, not 8');
  });
});
