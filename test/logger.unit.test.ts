import { Writable } from 'node:stream';
import { pino } from 'pino';
import { expect, test, vi } from 'vitest';
import { throttledWarn } from '../src/logger.js';

test('a throttled warning logs at most once per interval and counts what it suppressed', () => {
  vi.useFakeTimers({ now: 1_000_000 });
  try {
    const lines: { msg: string; suppressed: number; n: number }[] = [];
    const sink = new Writable({
      write(chunk: Buffer, _enc, done) {
        lines.push(JSON.parse(chunk.toString()) as (typeof lines)[number]);
        done();
      },
    });
    const warn = throttledWarn(pino({ level: 'warn' }, sink), 'redis down', 1000);
    for (let n = 0; n < 5; n++) warn({ n }); // one logged, four suppressed
    vi.setSystemTime(1_001_000);
    warn({ n: 5 });
    expect(lines.map(({ msg, suppressed, n }) => ({ msg, suppressed, n }))).toEqual([
      { msg: 'redis down', suppressed: 0, n: 0 },
      { msg: 'redis down', suppressed: 4, n: 5 },
    ]);
  } finally {
    vi.useRealTimers();
  }
});
