import { vi } from 'vitest';

type Faked = 'setTimeout' | 'clearTimeout' | 'performance';

/**
 * Runs `body` with only `toFake` faked (so a deadline or a batch window falls when the test says),
 * the event loop's turns staying real; the real timers come back however it ends.
 */
export async function withFakeTimers<T>(toFake: readonly Faked[], body: () => Promise<T>): Promise<T> {
  vi.useFakeTimers({ toFake: [...toFake] });
  try {
    return await body();
  } finally {
    vi.useRealTimers();
  }
}
