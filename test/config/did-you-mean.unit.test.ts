// The edit distance behind "did you mean …" (optimal string alignment: Levenshtein plus adjacent
// swaps), against a recursive reference model, and the suggestion's threshold.
import fc from 'fast-check';
import { describe, expect, test } from 'vitest';
import { didYouMean, editDistance } from '../../src/config/did-you-mean.js';

/** The definition, written as recursion with memo: the reference the table version must match. */
function reference(a: string, b: string): number {
  const memo = new Map<string, number>();
  const d = (i: number, j: number): number => {
    if (i === 0) return j;
    if (j === 0) return i;
    const key = `${i},${j}`;
    const known = memo.get(key);
    if (known !== undefined) return known;
    let best = Math.min(d(i - 1, j) + 1, d(i, j - 1) + 1, d(i - 1, j - 1) + (a[i - 1] === b[j - 1] ? 0 : 1));
    if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1])
      best = Math.min(best, d(i - 2, j - 2) + 1);
    memo.set(key, best);
    return best;
  };
  return d(a.length, b.length);
}

describe('editDistance', () => {
  test.each([
    ['limt', 'limit', 1],
    ['ipp', 'ip', 1],
    ['lmiit', 'limit', 1],
    ['lmiti', 'limit', 2],
    ['slidng', 'sliding', 1],
    ['', 'abc', 3],
    ['same', 'same', 0],
    ['ab', 'ba', 1],
  ])('%s → %s: %d', (a, b, d) => {
    expect(editDistance(a, b)).toBe(d);
  });

  test('property: equals the reference, is symmetric, and bounded by the longer length', () => {
    const word = fc.string({ unit: fc.constantFrom('a', 'b', 'c', 'd'), maxLength: 8 });
    fc.assert(
      fc.property(word, word, (a, b) => {
        const d = editDistance(a, b);
        expect(d).toBe(reference(a, b));
        expect(editDistance(b, a)).toBe(d);
        expect(d).toBeLessThanOrEqual(Math.max(a.length, b.length));
        expect(d === 0).toBe(a === b);
      }),
    );
  });
});

describe('didYouMean', () => {
  test('the closest candidate within a third of the word, the first on a tie, case aside', () => {
    expect(didYouMean('limt', ['limit', 'period'])).toBe('limit');
    expect(didYouMean('limiter', ['limiters', 'listeners'])).toBe('limiters');
    expect(didYouMean('IPP', ['ip', 'jwt'])).toBe('ip');
    expect(didYouMean('xyz', ['ip', 'jwt'])).toBeUndefined();
    expect(didYouMean('ab', ['ac', 'ad'])).toBe('ac');
    expect(didYouMean('token', ['workspace_token'])).toBeUndefined();
  });
});
