import { test as base, describe, expect } from 'vitest';
import { analyse } from '../../../src/services/reports/analyse.js';
import { AnalysisPool, AnalysisRefused } from '../../../src/services/reports/analysis-pool.js';
import type { PageFacts } from '../../../src/services/reports/checks/types.js';
import { BAD_PAGE, DECENT_PAGE, GOOD_PAGE, largePageHtml } from '../../helpers/test-pages.js';

/** The pool the file shares: two threads, a minute's deadline, a queue of 64. */
const test = base.extend('pool', { scope: 'file' }, ({}, { onCleanup }) => {
  const pool = new AnalysisPool({ threads: 2, timeoutMs: 60_000, maxQueue: 64 });
  onCleanup(() => pool.close());
  return pool;
});

const facts = (size: number): PageFacts => ({
  url: 'http://pages.test/page',
  headers: { 'x-robots-tag': 'all' },
  encoding: 'gzip',
  size,
  loadTimeMs: 250,
  robotsTxt: null,
});

describe('analysis pool (worker threads, from the TypeScript sources)', () => {
  test('gives the same results as the analysis in this thread', async ({ pool }) => {
    for (const html of [GOOD_PAGE, DECENT_PAGE, BAD_PAGE]) {
      const f = facts(Buffer.byteLength(html));
      expect(await pool.run(html, f)).toEqual(analyse(html, f));
    }
  });

  test('the facts of a fetched page are sent without its HTML', async ({ pool }) => {
    const page = { ...facts(1), html: '<title>t</title>' };
    expect((await pool.run(page.html, page)).title.value).toBe('t');
  });

  test('a large page is analysed while this thread goes on', async ({ pool }) => {
    const html = largePageHtml();
    const events: string[] = [];
    const analysed = pool.run(html, facts(Buffer.byteLength(html))).then((results) => {
      events.push('analysed');
      return results;
    });
    // An analysis in this thread would hold every timer back until it ended.
    await new Promise((resolve) => setTimeout(resolve, 0));
    events.push('timer');
    const results = await analysed;
    expect(events).toEqual(['timer', 'analysed']);
    expect(results.headings.errors).toBeUndefined();
  });

  test('bounded: more analyses than threads are queued and all answered', async ({ pool }) => {
    const runs = Array.from({ length: 6 }, (_, i) => pool.run(`<title>page ${i}</title>`, facts(10)));
    expect((await Promise.all(runs)).map((r) => r.title.value)).toEqual(
      Array.from({ length: 6 }, (_, i) => `page ${i}`),
    );
  });

  test('an analysis past its deadline is stopped and refused as a timeout', async () => {
    const quick = new AnalysisPool({ threads: 1, timeoutMs: 100, maxQueue: 4 });
    try {
      const html = largePageHtml();
      const refused = await quick.run(html, facts(Buffer.byteLength(html))).catch((err: unknown) => err);
      expect(refused).toBeInstanceOf(AnalysisRefused);
      expect((refused as AnalysisRefused).reason).toBe('timeout');
    } finally {
      await quick.close();
    }
  });

  test('past the queue bound, an analysis is refused at once as busy', async () => {
    const small = new AnalysisPool({ threads: 1, timeoutMs: 60_000, maxQueue: 1 });
    try {
      await small.run('<title>warm</title>', facts(10)); // the thread is up
      const html = largePageHtml();
      const runs = [1, 2, 3].map(() =>
        small.run(html, facts(Buffer.byteLength(html))).then(
          () => 'analysed',
          (err: unknown) => (err instanceof AnalysisRefused ? err.reason : 'other'),
        ),
      );
      expect(await Promise.all(runs)).toEqual(['analysed', 'analysed', 'busy']);
    } finally {
      await small.close();
    }
  });
});
