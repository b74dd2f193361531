import { check, clip, LIMITS, SHOWN, type CheckResult, type PageFacts } from './types.js';

/** Checks of how the page was served. */

export function httpsEncryption(facts: PageFacts): CheckResult {
  const passed = new URL(facts.url).protocol === 'https:';
  return check('high', passed, clip(facts.url, SHOWN.url), { missing: null });
}

const COMPRESSIONS = ['gzip', 'x-gzip', 'br', 'deflate', 'zstd'];

export function textCompression(facts: PageFacts): CheckResult {
  const passed = facts.encoding !== null && COMPRESSIONS.includes(facts.encoding);
  return check('medium', passed, facts.encoding, { missing: null });
}

/** Seconds from the first request to the last byte, two decimals. */
export function loadTime(facts: PageFacts): CheckResult {
  const seconds = Math.round(facts.loadTimeMs / 10) / 100;
  return check('medium', seconds <= LIMITS.loadTimeSeconds, seconds, { too_slow: seconds });
}

export function pageSize(facts: PageFacts): CheckResult {
  return check('medium', facts.size <= LIMITS.pageSize, facts.size, { too_large: facts.size });
}
