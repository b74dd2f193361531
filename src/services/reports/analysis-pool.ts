import { createRequire } from 'node:module';
import { availableParallelism } from 'node:os';
import { pathToFileURL } from 'node:url';
import { Piscina } from 'piscina';
import type { AnalyseTask } from './analyse-worker.js';
import type { PageFacts, Results } from './checks/types.js';

/**
 * The worker file, next to this module: analyse-worker.js in the compiled build (dist/), or
 * analyse-worker.ts when the sources run as TypeScript (vitest, tsx), then loaded through tsx's
 * loader (a development dependency, there whenever the sources run).
 */
function workerSource(): { filename: string; execArgv?: string[] } {
  const fromSources = new URL(import.meta.url).pathname.endsWith('.ts');
  const filename = new URL(`./analyse-worker.${fromSources ? 'ts' : 'js'}`, import.meta.url).href;
  if (!fromSources) return { filename };
  const tsx = pathToFileURL(createRequire(import.meta.url).resolve('tsx')).href;
  return { filename, execArgv: ['--import', tsx] };
}

/** One thread fewer than the CPUs (the gateway keeps one), at least one, at most four. */
export const defaultAnalysisThreads = (): number => Math.max(1, Math.min(4, availableParallelism() - 1));

export interface AnalysisLimits {
  /** Analyses at once (worker threads). */
  readonly threads: number;
  /** The longest one analysis may take; then its thread is stopped. */
  readonly timeoutMs: number;
  /** Analyses waiting for a thread; one more is refused at once. */
  readonly maxQueue: number;
}

/** Why an analysis did not run to its end: it took too long, or too many were waiting. */
export class AnalysisRefused extends Error {
  constructor(readonly reason: 'timeout' | 'busy') {
    super(reason === 'timeout' ? 'analysis timed out' : 'analysis queue full');
  }
}

/**
 * Page analysis off the event loop: parsing a page and running the checks is CPU-bound (seconds
 * for a 5 MB page), and the embedded services share the gateway's event loop, so it runs in
 * worker threads, at most `threads` analyses at once, the others queued in order. Threads start
 * on first use and stop when idle. A pathological page (deeply nested markup) cannot hold a thread
 * past `timeoutMs`, and a flood cannot queue without bound.
 */
export class AnalysisPool {
  readonly #pool: Piscina<AnalyseTask, Results>;
  /** Analyses running or waiting. */
  #pending = 0;

  constructor(private readonly limits: AnalysisLimits) {
    this.#pool = new Piscina<AnalyseTask, Results>({
      ...workerSource(),
      minThreads: 0,
      maxThreads: limits.threads,
      idleTimeout: 30_000,
    });
  }

  /** The results of every check; only the facts (not the HTML a fetched page also holds) are sent along. */
  async run(html: string, facts: PageFacts): Promise<Results> {
    if (this.#pending >= this.limits.threads + this.limits.maxQueue) throw new AnalysisRefused('busy');
    const { url, headers, encoding, size, loadTimeMs, robotsTxt } = facts;
    const signal = AbortSignal.timeout(this.limits.timeoutMs);
    this.#pending++;
    try {
      return await this.#pool.run(
        { html, facts: { url, headers, encoding, size, loadTimeMs, robotsTxt } },
        { signal },
      );
    } catch (err) {
      throw signal.aborted ? new AnalysisRefused('timeout') : err;
    } finally {
      this.#pending--;
    }
  }

  close(): Promise<void> {
    return this.#pool.destroy();
  }
}
