import { describe, expect, test } from 'vitest';
import { bulkSyncBodyLimit } from '../../../src/cli/services-config.js';
import { loadConfigText } from '../../../src/rules/load.js';
import { parseChanged, parseFullSync } from '../../../src/services/bulksync/batch.js';
import { KIND_SPECS, sameValues } from '../../../src/services/bulksync/kinds.js';
import { HttpError } from '../../../src/services/kit/errors.js';
import { DEFAULT_CONFIG } from '../../helpers/default-config.js';

const { posts, products, coupons } = KIND_SPECS;

/** The field errors of the 422 that `fn` throws. */
function fieldsOf(fn: () => unknown): Record<string, string[]> {
  try {
    fn();
  } catch (err) {
    expect(err).toBeInstanceOf(HttpError);
    expect((err as HttpError).status).toBe(422);
    return (err as HttpError).fields!;
  }
  throw new Error('expected a 422');
}

describe('full-sync batches', () => {
  test('items come out normalised: ids as text, empty text as null, UTC times, currency upper case', () => {
    expect(
      parseFullSync(posts, {
        items: [
          {
            id: 7,
            title: '  Hello ',
            url: 'https://a.example/',
            content: '',
            modified_at: '2024-05-01T10:00:00+02:00',
          },
        ],
      }),
    ).toEqual({
      syncId: undefined,
      done: true,
      items: [
        {
          id: '7',
          title: 'Hello',
          url: 'https://a.example/',
          content: null,
          excerpt: null,
          status: null,
          modified_at: '2024-05-01T08:00:00.000Z',
        },
      ],
    });
    expect(
      parseFullSync(products, {
        sync_id: 's',
        done: false,
        items: [{ id: 'p', name: 'P', url: 'http://a.example', price: 0, currency: 'gbp', ignored: true }],
      }),
    ).toEqual({
      syncId: 's',
      done: false,
      items: [
        {
          id: 'p',
          name: 'P',
          url: 'http://a.example',
          price: 0,
          currency: 'GBP',
          sku: null,
          stock_status: null,
          description: null,
        },
      ],
    });
    expect(
      parseFullSync(coupons, {
        items: [{ id: 'c', code: 'X', discount_type: 'percent', amount: 100 }],
      }).items,
    ).toEqual([
      {
        id: 'c',
        code: 'X',
        discount_type: 'percent',
        amount: 100,
        expires_at: null,
        usage_limit: null,
        usage_count: 0,
      },
    ]);
  });

  test('7 and "7" are the same item: the later one is refused', () => {
    expect(
      fieldsOf(() =>
        parseFullSync(posts, {
          items: [
            { id: 7, title: 'a', url: 'https://a.example' },
            { id: 8, title: 'b', url: 'https://a.example' },
            { id: '7', title: 'c', url: 'https://a.example' },
          ],
        }),
      ),
    ).toEqual({ 'items.2.id': ['The id "7" was already given at items.0.'] });
  });

  test('ids: blank, too long, fractional, boolean and object ids are refused', () => {
    const item = (id: unknown) => ({ id, title: 't', url: 'https://a.example' });
    const bad = 'The id field must be a non-empty string (at most 191 characters) or an integer.';
    expect(
      fieldsOf(() =>
        parseFullSync(posts, {
          items: [
            item('  '),
            item('x'.repeat(192)),
            item(1.5),
            item(true),
            item({}),
            item(null),
            item('x'.repeat(191)),
          ],
        }),
      ),
    ).toEqual({
      'items.0.id': [bad],
      'items.1.id': [bad],
      'items.2.id': [bad],
      'items.3.id': [bad],
      'items.4.id': [bad],
      'items.5.id': ['The id field is required.'],
    });
  });

  test('urls must be http or https', () => {
    const item = (url: unknown) => ({ id: String(url), title: 't', url });
    const bad = ['The url field must be a valid http or https URL.'];
    expect(
      fieldsOf(() =>
        parseFullSync(posts, {
          items: [item('javascript:alert(1)'), item('//a.example'), item('https://a.example/x?y=1'), item(5)],
        }),
      ),
    ).toEqual({ 'items.0.url': bad, 'items.1.url': bad, 'items.3.url': ['The url field must be a string.'] });
  });

  test('a percent coupon is at most 100; a fixed one is not bounded', () => {
    const coupon = (id: string, discount_type: string, amount: number) => ({
      id,
      code: id,
      discount_type,
      amount,
    });
    expect(
      fieldsOf(() =>
        parseFullSync(coupons, { items: [coupon('a', 'percent', 100.5), coupon('b', 'fixed', 500)] }),
      ),
    ).toEqual({ 'items.0.amount': ['The amount field must not be greater than 100 for a percent coupon.'] });
  });
});

describe('changed batches', () => {
  test('upserted and deleted default to empty; deleted ids become text', () => {
    expect(parseChanged(posts, {})).toEqual({ upserted: [], deleted: [] });
    expect(parseChanged(posts, { deleted: [3, 'x'] })).toEqual({ upserted: [], deleted: ['3', 'x'] });
  });

  test('an id both upserted and deleted is refused', () => {
    expect(
      fieldsOf(() =>
        parseChanged(posts, { upserted: [{ id: 3, title: 't', url: 'https://a.example' }], deleted: ['3'] }),
      ),
    ).toEqual({ 'deleted.0': ['The id "3" is also in upserted.'] });
  });
});

describe('unchanged detection', () => {
  test('compares every data column exactly', () => {
    const item = {
      id: 'c',
      code: 'X',
      discount_type: 'fixed',
      amount: 5,
      expires_at: null,
      usage_limit: null,
      usage_count: 0,
    };
    const stored = {
      code: 'X',
      discount_type: 'fixed',
      amount: 5,
      expires_at: null,
      usage_limit: null,
      usage_count: 0,
    };
    expect(sameValues(coupons, stored, item)).toBe(true);
    expect(sameValues(coupons, { ...stored, usage_count: 1 }, item)).toBe(false);
    expect(sameValues(coupons, { ...stored, code: 'x' }, item)).toBe(false);
    expect(sameValues(coupons, { ...stored, usage_limit: 0 }, item)).toBe(false);
  });
});

describe('the body bound the handshake announces', () => {
  test('the smaller of the service bound and the wp-plugin route bound', () => {
    const config = (env: Record<string, string>) =>
      loadConfigText(DEFAULT_CONFIG, 'gateway.yaml', env).config;
    expect(bulkSyncBodyLimit(config({}))).toBe(5 * 1024 * 1024);
    expect(bulkSyncBodyLimit(config({ MAX_BODY_SIZE: '1kb' }))).toBe(1024);
    const routeOnly = config({});
    const shrunk = {
      ...routeOnly,
      routes: routeOnly.routes.map((r) => (r.name === 'wp-plugin' ? { ...r, maxBodySize: 2048 } : r)),
    };
    expect(bulkSyncBodyLimit(shrunk)).toBe(2048);
  });
});
