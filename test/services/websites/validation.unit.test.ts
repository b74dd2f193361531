import { describe, expect, test } from 'vitest';
import { HttpError } from '../../../src/services/kit/errors.js';
import { parseList, parseStore, parseUpdate } from '../../../src/services/websites/validation.js';

/** The 422 (or 400) a parser throws, as status and field messages. */
function thrown(fn: () => unknown): { status: number; message: string; fields?: Record<string, string[]> } {
  try {
    fn();
  } catch (err) {
    if (err instanceof HttpError) return { status: err.status, message: err.message, fields: err.fields };
    throw err;
  }
  throw new Error('nothing was thrown');
}

const nothingTaken = () => false;

describe('parseStore', () => {
  test('the url alone: the other fields absent, for the caller to default', () => {
    expect(parseStore({ url: 'https://www.Example.com/x' }, nothingTaken)).toEqual({ url: 'example.com' });
  });

  test('form strings and JSON numbers give the same values', () => {
    const form = parseStore(
      { url: 'a.example', privacy: '2', password: 'pw', email: '1', exclude_bots: '0' },
      nothingTaken,
    );
    const json = parseStore(
      { url: 'a.example', privacy: 2, password: 'pw', email: 1, exclude_bots: 0 },
      nothingTaken,
    );
    expect(form).toEqual({ url: 'a.example', privacy: 2, password: 'pw', email: 1, exclude_bots: 0 });
    expect(json).toEqual(form);
  });

  test('exclusion lists are normalised; empty ones are null', () => {
    expect(
      parseStore({ url: 'a.example', exclude_params: ' a \n\n b ', exclude_ips: '\n' }, nothingTaken),
    ).toEqual({ url: 'a.example', exclude_params: 'a\nb', exclude_ips: null });
  });

  test('unknown fields are dropped', () => {
    expect(parseStore({ url: 'a.example', id: 5, user_id: 2 }, nothingTaken)).toEqual({ url: 'a.example' });
  });

  test('the taken check sees the normalised host', () => {
    const seen: string[] = [];
    const error = thrown(() =>
      parseStore({ url: 'http://WWW.Taken.example:81/' }, (host) => (seen.push(host), true)),
    );
    expect(seen).toEqual(['taken.example']);
    expect(error).toEqual({
      status: 422,
      message: 'The given data was invalid.',
      fields: { url: ['The url has already been taken.'] },
    });
  });

  test('an invalid url is not looked up', () => {
    const seen: string[] = [];
    thrown(() => parseStore({ url: 'ftp://x.example' }, (host) => (seen.push(host), true)));
    expect(seen).toEqual([]);
  });

  test('privacy 2 needs the password; the default privacy does not', () => {
    expect(thrown(() => parseStore({ url: 'a.example', privacy: '2' }, nothingTaken)).fields).toEqual({
      password: ['The password field is required when privacy is 2.'],
    });
    expect(parseStore({ url: 'a.example', privacy: '1' }, nothingTaken)).toEqual({
      url: 'a.example',
      privacy: 1,
    });
  });

  test('every field error at once', () => {
    expect(
      thrown(() => parseStore({ privacy: 'x', email: 9, exclude_params: 'a b', password: 7 }, nothingTaken))
        .fields,
    ).toEqual({
      url: ['The url field is required.'],
      privacy: ['The selected privacy is invalid.'],
      email: ['The selected email is invalid.'],
      exclude_params: ['The exclude_params field has an invalid parameter name: "a b".'],
      password: ['The password field must be a string.'],
    });
  });

  test('blank choices (privacy=&email=&exclude_bots=) are not given: the defaults', () => {
    expect(parseStore({ url: 'a.example', privacy: '', email: '', exclude_bots: '' }, nothingTaken)).toEqual({
      url: 'a.example',
    });
  });

  test.each([' 1', '1 ', '\t1', ' 1 ', '+1', '1.0', '1e0'])(
    'a choice written %j is not an integer: refused',
    (written) => {
      expect(thrown(() => parseStore({ url: 'a.example', email: written }, nothingTaken)).fields).toEqual({
        email: ['The selected email is invalid.'],
      });
    },
  );

  test.each([
    ['1.2.3', 'a numeric host that is not four decimal parts'],
    ['0x7f.1', 'a hex host'],
    ['www.', 'nothing after www.'],
    ['_._', 'labels of underscores'],
  ])('url %j (%s): refused', (url) => {
    expect(thrown(() => parseStore({ url }, nothingTaken)).fields).toEqual({
      url: ['The url field must be a valid URL.'],
    });
  });

  test('a CIDR prefix with a leading zero: refused', () => {
    expect(
      thrown(() => parseStore({ url: 'a.example', exclude_ips: '1.2.3.4/08' }, nothingTaken)).fields,
    ).toEqual({
      exclude_ips: ['The exclude_ips field has an invalid IP address or CIDR range: "1.2.3.4/08".'],
    });
  });

  test.each([[['x']], ['text'], [42]])('a body that is not a field map (%j): 400', (body) => {
    expect(thrown(() => parseStore(body, nothingTaken))).toEqual({
      status: 400,
      message: 'The request body must be an object of fields.',
      fields: undefined,
    });
  });

  test('no body: url is required', () => {
    expect(thrown(() => parseStore(undefined, nothingTaken)).fields).toEqual({
      url: ['The url field is required.'],
    });
  });
});

describe('parseUpdate', () => {
  test('url is ignored; only the fields sent come back', () => {
    expect(parseUpdate({ url: 'other.example', email: '1' }, false)).toEqual({ email: 1 });
  });

  test('null and "" clear an exclusion list; absent leaves it', () => {
    expect(parseUpdate({ exclude_params: '', exclude_ips: null }, false)).toEqual({
      exclude_params: null,
      exclude_ips: null,
    });
    expect(parseUpdate({}, false)).toEqual({});
  });

  test('privacy 2 needs a password unless one is set', () => {
    expect(thrown(() => parseUpdate({ privacy: 2 }, false)).fields).toEqual({
      password: ['The password field is required when privacy is 2.'],
    });
    expect(parseUpdate({ privacy: 2 }, true)).toEqual({ privacy: 2 });
    expect(parseUpdate({ privacy: 2, password: 'pw' }, false)).toEqual({ privacy: 2, password: 'pw' });
  });
});

describe('parseList', () => {
  test('defaults', () => {
    expect(parseList({})).toEqual({ search: undefined, sort: 'asc', perPage: 10 });
    expect(parseList({ search: '', sort: '', per_page: '' })).toEqual({
      search: undefined,
      sort: 'asc',
      perPage: 10,
    });
  });

  test('search is lower-cased; sort and per_page read', () => {
    expect(parseList({ search: 'ExAmple', sort: 'desc', per_page: '100', page: '3' })).toEqual({
      search: 'example',
      sort: 'desc',
      perPage: 100,
    });
  });

  test('a Unicode search also gives its punycode form; an ASCII one none', () => {
    expect(parseList({ search: 'BÜCHER.de' })).toEqual({
      search: 'bücher.de',
      searchAscii: 'xn--bcher-kva.de',
      sort: 'asc',
      perPage: 10,
    });
    expect(parseList({ search: 'xn--bcher' }).searchAscii).toBeUndefined();
  });

  test.each([' 10', '10 ', '9', '101', '0', '1e2', '10.0', ' ', '-10', 'abc'])(
    'per_page %j is out of range: the default, 10',
    (perPage) => {
      expect(parseList({ per_page: perPage }).perPage).toBe(10);
    },
  );

  test.each(['random', 'ASC', ' asc'])('sort %j is not asc or desc: the default, asc', (sort) => {
    expect(parseList({ sort }).sort).toBe('asc');
  });

  test('a repeated sort or per_page (an array) reads as the default', () => {
    expect(parseList({ sort: ['desc', 'asc'], per_page: ['25', '50'] })).toEqual({
      search: undefined,
      sort: 'asc',
      perPage: 10,
    });
  });
});
