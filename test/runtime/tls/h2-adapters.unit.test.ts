import { describe, expect, test } from 'vitest';
import { http1Headers } from '../../../src/runtime/tls/h2-adapters.js';

describe('http1Headers: an HTTP/2 request seen as HTTP/1.1', () => {
  test('pseudo-headers are dropped, :authority becomes Host', () => {
    const h2 = {
      ':method': 'GET',
      ':path': '/a?b',
      ':scheme': 'https',
      ':authority': 'shop.example:8443',
      accept: '*/*',
    };
    expect(http1Headers(h2, true)).toEqual({ host: 'shop.example:8443', accept: '*/*' });
  });

  test(':authority wins over a Host header; without :authority, Host stays', () => {
    expect(http1Headers({ ':authority': 'a.example', host: 'b.example' }, true)).toEqual({
      host: 'a.example',
    });
    expect(http1Headers({ host: 'b.example' }, true)).toEqual({ host: 'b.example' });
  });

  test('a body without Content-Length is announced as chunked; with one, or with none at all, nothing is added', () => {
    expect(http1Headers({ ':method': 'POST' }, false)).toEqual({ 'transfer-encoding': 'chunked' });
    expect(http1Headers({ ':method': 'POST', 'content-length': '3' }, false)).toEqual({
      'content-length': '3',
    });
    expect(http1Headers({ ':method': 'POST' }, true)).toEqual({});
  });
});
