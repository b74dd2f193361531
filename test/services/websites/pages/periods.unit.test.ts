import { describe, expect, test } from 'vitest';
import {
  changeDirection,
  changeText,
  presets,
  previousRange,
  rangeDays,
} from '../../../../src/services/websites/pages/periods.js';
import { countryName, shareStep, valueText } from '../../../../src/services/websites/pages/display.js';
import { csvLines, csvValues } from '../../../../src/services/websites/pages/csv-export.js';

describe('date presets and the previous period', () => {
  test('the presets end today; this month from its first; 12 months from the first of 11 months before', () => {
    expect(presets('2026-03-15').map((p) => [p.label, p.range.from, p.range.to])).toEqual([
      ['Today', '2026-03-15', '2026-03-15'],
      ['7 days', '2026-03-09', '2026-03-15'],
      ['30 days', '2026-02-14', '2026-03-15'],
      ['This month', '2026-03-01', '2026-03-15'],
      ['12 months', '2025-04-01', '2026-03-15'],
    ]);
  });

  test('the previous period has the same length and ends the day before', () => {
    expect(previousRange({ from: '2026-03-01', to: '2026-03-30' })).toEqual({
      from: '2026-01-30',
      to: '2026-02-28',
    });
    expect(previousRange({ from: '2026-01-01', to: '2026-01-01' })).toEqual({
      from: '2025-12-31',
      to: '2025-12-31',
    });
    expect(rangeDays({ from: '2024-02-01', to: '2024-03-01' })).toBe(30);
  });

  test.each([
    [4, 2, '+100%', 'up'],
    [1, 4, '\u221275%', 'down'],
    [3, 3, '0%', 'same'],
    [0, 0, '0%', 'same'],
    [5, 0, 'new', 'up'],
    [1.3, 1, '+30%', 'up'],
    [1001, 1000, '0%', 'up'],
  ] as const)('%s against %s: %s', (current, previous, text, direction) => {
    expect(changeText(current, previous)).toBe(text);
    expect(changeDirection(current, previous)).toBe(direction);
  });
});

describe('how values show', () => {
  test.each([
    ['DE', 'Germany'],
    ['GB', 'United Kingdom'],
    ['US', 'United States'],
    ['(other)', '(other)'],
    ['de', 'de'],
  ])('country %s: %s', (code, name) => {
    expect(countryName(code)).toBe(name);
  });

  test('share bars in whole percent; value sums with their unit', () => {
    expect([shareStep(1, 3), shareStep(2, 3), shareStep(0, 0), shareStep(5, 5)]).toEqual([33, 67, 0, 100]);
    expect(valueText(4950, 'cents')).toBe('4,950 cents');
    expect(valueText(12, '')).toBe('12');
  });

  test("the events' CSV: a values column, each unit's sum", () => {
    const values = new Map([
      [
        'purchase',
        [
          { name: 'purchase', unit: 'cents', count: 2, total: 4950 },
          { name: 'purchase', unit: 'kg', count: 1, total: 2 },
        ],
      ],
    ]);
    expect(csvValues(values.get('purchase')!)).toBe('4950 cents; 2 kg');
    expect(
      csvLines(
        {
          rows: [
            { value: 'purchase', count: 3 },
            { value: 'signup', count: 1 },
          ],
          sum: 4,
        },
        values,
      ),
    ).toBe('purchase,3,75.0%,4950 cents; 2 kg\r\nsignup,1,25.0%,\r\n');
  });
});
