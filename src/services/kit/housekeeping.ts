import { setImmediate as yieldToLoop } from 'node:timers/promises';

/** Where a failed task is reported (pino's and fastify's loggers both fit). */
interface ErrorLog {
  error(obj: object, msg: string): void;
}

/**
 * Runs `task` every `intervalMs` (never two at once, never holding the process open); a failure is
 * logged and the next tick tries again. Returns the stop, which waits for a running task.
 */
export function every(
  intervalMs: number,
  task: () => void | Promise<void>,
  log: ErrorLog,
  what: string,
): () => Promise<void> {
  let running: Promise<void> | undefined;
  const tick = () => {
    running ??= Promise.resolve()
      .then(task)
      .catch((err: unknown) => log.error({ err }, `${what} failed`))
      .finally(() => (running = undefined));
  };
  const timer = setInterval(tick, intervalMs);
  timer.unref();
  return async () => {
    clearInterval(timer);
    await running;
  };
}

/**
 * Deletes in batches of `batch` rows (each its own short transaction), yielding to the event loop
 * between batches, so a large backlog never holds the write lock or the loop for long. Returns how
 * many rows went.
 */
export async function deleteInBatches(deleteBatch: (batch: number) => number, batch = 1000): Promise<number> {
  let total = 0;
  for (;;) {
    const n = deleteBatch(batch);
    total += n;
    if (n < batch) return total;
    await yieldToLoop();
  }
}
