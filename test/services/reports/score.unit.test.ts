import { describe, expect, test } from 'vitest';
import type { CheckResult, Importance } from '../../../src/services/reports/checks/types.js';
import { resultFor, score } from '../../../src/services/reports/score.js';

const c = (importance: Importance, passed: boolean): CheckResult => ({ passed, importance, value: null });

describe('reports score', () => {
  test('weights: high 3, medium 2, low 1, as a rounded share of 100', () => {
    expect(score({})).toBe(0);
    expect(score({ a: c('high', true) })).toBe(100);
    expect(score({ a: c('high', false) })).toBe(0);
    expect(score({ a: c('high', true), b: c('low', false) })).toBe(75);
    expect(score({ a: c('medium', true), b: c('low', false) })).toBe(67);
    expect(score({ a: c('low', true), b: c('high', false), c: c('medium', false) })).toBe(17);
  });

  test('good above 79, decent 49 to 79, bad below 49', () => {
    expect([100, 80, 79, 49, 48, 0].map(resultFor)).toEqual([
      'good',
      'good',
      'decent',
      'decent',
      'bad',
      'bad',
    ]);
  });
});
