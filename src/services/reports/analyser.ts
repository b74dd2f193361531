import { HttpError } from '../kit/errors.js';
import { AnalysisRefused, type AnalysisPool } from './analysis-pool.js';
import { FetchFailure } from './fetch-failure.js';
import type { PageFetcher } from './fetch-page.js';
import { resultFor, score } from './score.js';
import type { Analysis } from './store.js';

/**
 * Fetches a page and analyses it in the pool (off the event loop); a page that cannot be fetched
 * is the 422 on `url` that says why.
 */
export async function analysePage(fetcher: PageFetcher, pool: AnalysisPool, url: string): Promise<Analysis> {
  let page;
  try {
    page = await fetcher.fetch(url);
  } catch (err) {
    if (err instanceof FetchFailure) throw HttpError.field('url', err.message);
    throw err;
  }
  // The site's robots.txt, from the origin the page was finally served from.
  const robotsTxt = await fetcher.robotsTxt(page.url);
  let results;
  try {
    results = await pool.run(page.html, { ...page, robotsTxt });
  } catch (err) {
    if (!(err instanceof AnalysisRefused)) throw err;
    if (err.reason === 'timeout') throw HttpError.field('url', 'The page took too long to analyse.');
    throw new HttpError(503, 'The analyser is busy. Please retry shortly.', 'analyser_busy');
  }
  const points = score(results);
  return { result: resultFor(points), score: points, results, generatedAt: new Date().toISOString() };
}
