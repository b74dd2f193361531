import { performance } from 'node:perf_hooks';

/**
 * The wall clock as it was at the process start, advanced by the monotonic clock: a slice is spent
 * until its window's end in Redis (the lease's reply: a duration), so setting the system clock
 * back must not let it be spent into the next window.
 */
export const steadyNow = (): number => TIME_ORIGIN + performance.now();
const TIME_ORIGIN = performance.timeOrigin;
