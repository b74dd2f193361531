import { describe, expect, test } from 'vitest';
import { configSchema, type GatewayConfig } from '../../../src/config/schema.js';
import { HttpError } from '../../../src/services/kit/errors.js';
import { validate } from '../../../src/services/kit/validate.js';
import { checkCoupon } from '../../../src/services/widget/coupons.js';
import {
  conversationPageBody,
  eventsBody,
  initBody,
  leadBody,
  nestingDepth,
  satisfactionBody,
  streamBody,
  typingBody,
} from '../../../src/services/widget/schemas.js';
import type { CouponRow } from '../../../src/services/bulksync/store.js';
import { messageEvent } from '../../../src/services/widget/stream.js';
import { issuingConfig } from '../../../src/services/widget/tokens.js';
import { SAVE10_ROW } from '../bulksync/items.js';

/** The 422's field errors, or undefined when the input is valid. */
function fieldsOf(schema: Parameters<typeof validate>[0], input: unknown) {
  try {
    validate(schema, input);
    return undefined;
  } catch (err) {
    if (!(err instanceof HttpError)) throw err;
    expect(err.status).toBe(422);
    return err.fields;
  }
}

describe('request bodies', () => {
  test('init needs a workspace; website_id, page_url and locale are checked when given', () => {
    expect(fieldsOf(initBody, {})).toEqual({ workspace: ['The workspace field is required.'] });
    expect(
      fieldsOf(initBody, {
        workspace: 'acme',
        website_id: 'x',
        page_url: 'javascript:alert(1)',
        locale: 'e',
      }),
    ).toEqual({
      website_id: ['The selected website_id is invalid.'],
      page_url: ['The page_url field must be a valid http or https URL.'],
      locale: ['The locale field must be a language tag such as en or en-US.'],
    });
    expect(
      validate(initBody, {
        workspace: ' acme ',
        website_id: '7',
        page_url: 'https://a.test/x',
        locale: 'en-US',
      }),
    ).toEqual({ workspace: 'acme', website_id: 7, page_url: 'https://a.test/x', locale: 'en-US' });
    expect(validate(initBody, { workspace: 'acme', website_id: null, page_url: '' })).toEqual({
      workspace: 'acme',
      website_id: undefined,
      page_url: undefined,
      locale: undefined,
    });
  });

  test('a body that is not an object fails as a whole', () => {
    expect(fieldsOf(initBody, [1, 2])).toEqual({ _: ['The request body must be a JSON object.'] });
  });

  test('events name a bad item by its index', () => {
    expect(
      fieldsOf(eventsBody, {
        events: [
          { type: 'open' },
          { type: 'explode' },
          {},
          { type: 'page_view', occurred_at: 'yesterday', data: 'x' },
          7,
          { type: 'close', data: { blob: 'x'.repeat(5000) } },
        ],
      }),
    ).toEqual({
      'events.1.type': ['The selected type is invalid.'],
      'events.2.type': ['The type field is required.'],
      'events.3.occurred_at': ['The occurred_at field must be an ISO-8601 date-time.'],
      'events.3.data': ['The data field must be an object.'],
      'events.4': ['Each event must be an object.'],
      'events.5.data': ['The data field must not be greater than 4096 bytes.'],
    });
    expect(fieldsOf(eventsBody, {})).toEqual({ events: ['The events field is required.'] });
    expect(fieldsOf(eventsBody, { events: [] })).toEqual({ events: ['The events field is required.'] });
    expect(fieldsOf(eventsBody, { events: 'open' })).toEqual({
      events: ['The events field must be an array.'],
    });
    expect(fieldsOf(eventsBody, { events: Array.from({ length: 101 }, () => ({ type: 'open' })) })).toEqual({
      events: ['The events field must not have more than 100 items.'],
    });
    expect(
      validate(eventsBody, {
        events: [{ type: 'page_view', occurred_at: '2030-01-02T03:04:05+02:00', data: {} }],
      }),
    ).toEqual({ events: [{ type: 'page_view', occurred_at: '2030-01-02T03:04:05+02:00', data: {} }] });
  });

  test('event data nested past 32 levels is a field error, counted without recursion', () => {
    /** `{"a":[[…]]}`: the object and depth - 1 arrays. */
    const nested = (depth: number) =>
      JSON.parse(`{"a":${'['.repeat(depth - 1)}${']'.repeat(depth - 1)}}`) as object;
    expect(nestingDepth(nested(32), 32)).toBe(32);
    expect(nestingDepth({ a: 1, b: [1, { c: null }] }, 32)).toBe(3);
    expect(nestingDepth('text', 32)).toBe(0);
    // Given up just past the limit, however deep the rest goes.
    expect(nestingDepth(nested(100_000), 32)).toBe(33);
    expect(fieldsOf(eventsBody, { events: [{ type: 'open', data: nested(32) }] })).toBeUndefined();
    for (const depth of [33, 100_000]) {
      expect(
        fieldsOf(eventsBody, { events: [{ type: 'open' }, { type: 'open', data: nested(depth) }] }),
      ).toEqual({
        'events.1.data': ['The data field must not nest objects and arrays more than 32 levels deep.'],
      });
    }
  });

  test('a lead needs a name, a valid email and accepted consent', () => {
    expect(fieldsOf(leadBody, {})).toEqual({
      name: ['The name field is required.'],
      email: ['The email field is required.'],
      consent: ['The consent field must be accepted.'],
    });
    expect(fieldsOf(leadBody, { name: 'x'.repeat(201), email: 'not-an-email', consent: false })).toEqual({
      name: ['The name field must not be greater than 200 characters.'],
      email: ['The email field must be a valid email address.'],
      consent: ['The consent field must be accepted.'],
    });
    for (const consent of [true, 1, '1', 'true', 'yes', 'on']) {
      expect(validate(leadBody, { name: 'Ann', email: 'ann@example.com', consent })).toEqual({
        name: 'Ann',
        email: 'ann@example.com',
        message: undefined,
        consent: true,
      });
    }
  });

  test('numbers and booleans are read from JSON and from form strings', () => {
    expect(validate(satisfactionBody, { rating: '5' })).toEqual({ rating: 5, comment: undefined });
    for (const rating of [0, 6, 2.5, '3.0', 'five']) {
      expect(fieldsOf(satisfactionBody, { rating })).toEqual({
        rating: ['The rating field must be an integer between 1 and 5.'],
      });
    }
    expect(fieldsOf(satisfactionBody, {})).toEqual({ rating: ['The rating field is required.'] });
    expect(validate(typingBody, {})).toEqual({ typing: true });
    expect(validate(typingBody, { typing: 'false' })).toEqual({ typing: false });
    expect(fieldsOf(typingBody, { typing: 'maybe' })).toEqual({
      typing: ['The typing field must be true or false.'],
    });
    expect(validate(conversationPageBody, {})).toEqual({ after: 0, page: 1, per_page: 50 });
    expect(fieldsOf(conversationPageBody, { page: 0, per_page: 101 })).toEqual({
      page: ['The page field must be a positive integer.'],
      per_page: ['The per_page field must be an integer between 1 and 100.'],
    });
    expect(validate(streamBody, { after: '12' })).toEqual({ after: 12 });
  });
});

describe('coupons', () => {
  const now = Date.parse('2030-06-01T12:00:00Z');
  const coupon = (over: Partial<CouponRow> = {}): CouponRow => ({ ...SAVE10_ROW, ...over });
  const failure = (row: CouponRow | undefined) => {
    try {
      checkCoupon(row, now);
    } catch (err) {
      if (err instanceof HttpError) return [err.status, err.code, err.message];
      throw err;
    }
    return undefined;
  };

  test('a live coupon gives its discount', () => {
    expect(
      checkCoupon(coupon({ expires_at: '2030-06-01T12:00:01Z', usage_limit: 5, usage_count: 4 }), now),
    ).toEqual({ code: 'SAVE10', discount_type: 'percent', amount: 10, expires_at: '2030-06-01T12:00:01Z' });
  });

  test('unknown, expired (at or before now, or unreadable) and used-up coupons are refused', () => {
    expect(failure(undefined)).toEqual([404, 'coupon_not_found', 'This coupon code does not exist.']);
    for (const expires_at of ['2030-06-01T12:00:00Z', '2020-01-01', 'soon']) {
      expect(failure(coupon({ expires_at }))).toEqual([422, 'coupon_expired', 'This coupon has expired.']);
    }
    expect(failure(coupon({ usage_limit: 3, usage_count: 3 }))).toEqual([
      422,
      'coupon_usage_limit_reached',
      'This coupon has reached its usage limit.',
    ]);
    expect(failure(coupon({ usage_limit: 0 }))).toEqual([
      422,
      'coupon_usage_limit_reached',
      'This coupon has reached its usage limit.',
    ]);
  });
});

test('a stored message becomes one SSE event with its id as the cursor', () => {
  const message = {
    id: 42,
    sender: 'visitor' as const,
    body: 'two\nlines',
    created_at: '2030-01-01T00:00:00.000Z',
  };
  expect(messageEvent(message)).toBe(
    'id: 42\nevent: message\ndata: {"id":42,"sender":"visitor","body":"two\\nlines","created_at":"2030-01-01T00:00:00.000Z"}\n\n',
  );
});

describe('issuing config', () => {
  const config = (jwt: Record<string, unknown> | undefined): GatewayConfig['identity']['jwt'] =>
    configSchema.parse({
      listeners: [{}],
      upstreams: { u: { url: 'http://127.0.0.1:1' } },
      routes: [{ name: 'r', paths: ['/*'], upstream: 'u' }],
      identity: jwt ? { jwt } : {},
    }).identity.jwt;

  test('issues with the first algorithm when it is HS*', () => {
    const cfg = issuingConfig(config({ algorithms: ['HS512', 'HS256'], secret: 's' }));
    expect(cfg.algorithm).toBe('HS512');
    expect(cfg.ttl).toBe(86_400_000);
  });

  test('refuses to start when it could not issue tokens the gateway accepts', () => {
    expect(() => issuingConfig(config(undefined))).toThrow(
      'the widget service issues visitor tokens: configure identity.jwt',
    );
    expect(() => issuingConfig(config({ algorithms: ['RS256'], secret: 's' }))).toThrow(
      'the widget service signs visitor tokens with identity.jwt.algorithms[0], which must be HS256, HS384 or HS512 (got "RS256")',
    );
    expect(() => issuingConfig(config({ algorithms: ['HS256'], jwksFile: '/keys.json' }))).toThrow(
      /verifies with publicKeys\/jwksFile/,
    );
  });
});
