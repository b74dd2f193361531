import { describe, expect, test } from 'vitest';
import { csvLines, exportKey } from '../../../../src/services/websites/pages/csv-export.js';
import { csv } from '../../../../src/services/kit/csv.js';
import { ExportSlots } from '../../../../src/services/websites/pages/export-slots.js';
import { share } from '../../../../src/services/websites/pages/stats-view.js';

describe('the CSV exports at once', () => {
  test('per address and in all; a release counts once', () => {
    const slots = new ExportSlots({ perAddress: 2, total: 3 });
    const a1 = slots.acquire('a')!;
    const a2 = slots.acquire('a')!;
    expect(slots.acquire('a')).toBeUndefined();
    const b1 = slots.acquire('b')!;
    expect(slots.acquire('c')).toBeUndefined();
    a1();
    a1();
    expect(slots.running).toBe(2);
    expect(slots.acquire('a')).toBeDefined();
    expect(slots.acquire('c')).toBeUndefined();
    a2();
    b1();
    expect(slots.running).toBe(1);
  });

  test('0: no bound', () => {
    const slots = new ExportSlots({ perAddress: 0, total: 0 });
    for (let i = 0; i < 100; i++) expect(slots.acquire('a')).toBeDefined();
  });

  test.each([
    ['192.0.2.7', '192.0.2.7'],
    ['::ffff:192.0.2.7', '192.0.2.7'],
    ['2001:db8:1:2:aaaa::1', '2001:db8:1:2::/64'],
    ['2001:db8:1:2:bbbb::9', '2001:db8:1:2::/64'],
    [undefined, ''],
    ['not an address', ''],
  ])('the key of %s is %s', (address, key) => {
    expect(exportKey(address)).toBe(key);
  });

  test('a page of lines is what csv() writes for the same rows', () => {
    const rows = [
      { value: '/a,"b"', count: 3 },
      { value: '=1+1', count: 2 },
      { value: '/line\nbreak', count: 1 },
    ];
    const whole = csv(
      ['value', 'count', 'share'],
      rows.map((r) => [r.value, r.count, share(r.count, 9)]),
    );
    expect('value,count,share\r\n' + csvLines({ rows, sum: 9 })).toBe(whole);
  });
});
