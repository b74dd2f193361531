import { HttpError } from '../errors.js';
import { analyse } from './analyse.js';
import { FetchFailure, type PageFetcher } from './fetch-page.js';
import { resultFor, score } from './score.js';
import type { Analysis } from './store.js';

/** Fetches and analyses a page; a page that cannot be fetched is the 422 on `url` that says why. */
export async function analysePage(fetcher: PageFetcher, url: string): Promise<Analysis> {
  let page;
  try {
    page = await fetcher.fetch(url);
  } catch (err) {
    if (err instanceof FetchFailure) throw HttpError.field('url', err.message);
    throw err;
  }
  const results = analyse(page.html, page);
  const points = score(results);
  return { result: resultFor(points), score: points, results, generatedAt: new Date().toISOString() };
}
