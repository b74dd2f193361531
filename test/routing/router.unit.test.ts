import fc from 'fast-check';
import { describe, expect, test } from 'vitest';
import { compileHost, compilePath, normaliseHost } from '../../src/routing/patterns.js';
import { methodRefusal } from '../../src/routing/method.js';
import { Router } from '../../src/routing/router.js';

const router = new Router([
  { name: 'reports', hosts: ['analyzer.localhost'], methods: ['*'], paths: ['/*'] },
  { name: 'init', hosts: ['*'], methods: ['POST'], paths: ['/api/v1/widget/init'] },
  {
    name: 'messages',
    hosts: ['*'],
    methods: ['POST'],
    paths: ['/api/v1/widget/messages*', '/api/v1/widget/events'],
  },
  { name: 'sub', hosts: ['*.example.com'], methods: ['GET', 'HEAD'], paths: ['/sub'] },
  { name: 'fallback', hosts: ['*'], methods: ['*'], paths: ['/*'] },
]);
const match = (host: string | undefined, method: string, url: string) =>
  router.match(host, method, url)?.name;

describe('Router', () => {
  test('first match wins across host, method and path', () => {
    expect(match('analyzer.localhost:8080', 'POST', '/api/v1/widget/init')).toBe('reports');
    expect(match('ANALYZER.localhost', 'GET', '/')).toBe('reports');
    expect(match('localhost:8080', 'POST', '/api/v1/widget/init')).toBe('init');
    expect(match('localhost', 'POST', '/api/v1/widget/init?x=1')).toBe('init');
    expect(match('localhost', 'GET', '/api/v1/widget/init')).toBe('fallback');
    expect(match('localhost', 'POST', '/api/v1/widget/init/more')).toBe('fallback');
    expect(match('localhost', 'POST', '/api/v1/widget/messages/stream')).toBe('messages');
    expect(match('localhost', 'POST', '/api/v1/widget/messagesX')).toBe('messages');
    expect(match('localhost', 'POST', '/api/v1/widget/events/x')).toBe('fallback');
    expect(match('a.example.com', 'HEAD', '/sub')).toBe('sub');
    expect(match('example.com', 'GET', '/sub')).toBe('fallback');
    expect(match(undefined, 'GET', '/x')).toBe('fallback');
  });

  test('a limited route cannot be dodged by spelling the path differently', () => {
    for (const url of [
      '/api/v1/widget/init/',
      '/api/v1/widget/%69nit',
      '/api/v1//widget/init',
      '/api/v1/widget/./init',
      '/api/v1/widget/x/../init',
      '//api/v1/widget/init//?a=1',
      '/api/v1/widget/%69nit/%zz/..',
    ]) {
      expect(match('localhost', 'POST', url), url).toBe('init');
    }
    // A trailing slash stays inside a prefix route.
    expect(match('localhost', 'POST', '/api/v1/widget/messages/')).toBe('messages');
  });

  test('paths compare case-insensitively and without ";params"', () => {
    expect(match('localhost', 'POST', '/API/V1/Widget/INIT')).toBe('init');
    expect(match('localhost', 'POST', '/api/v1/widget/init;jsessionid=1')).toBe('init');
    expect(match('localhost', 'POST', '/api/v1/widget/init#frag')).toBe('init');
    expect(match('localhost', 'POST', '/api/v1/widget%2Finit')).toBe('init'); // refused later, but counted
  });

  test('a trailing dot on the Host is the same host', () => {
    expect(match('analyzer.localhost.', 'GET', '/')).toBe('reports');
    expect(match('ANALYZER.LOCALHOST.:8080', 'GET', '/')).toBe('reports');
    expect(match('analyzer.localhost..', 'GET', '/')).toBe('fallback');
  });

  test('a limited route cannot be dodged by spelling the method in another case', () => {
    for (const method of ['post', 'Post', 'pOST']) {
      expect(match('localhost', method, '/api/v1/widget/init'), method).toBe('init');
    }
    expect(match('a.example.com', 'head', '/sub')).toBe('sub');
    // Routes given in any case are compiled upper-case.
    const lower = new Router([{ name: 'l', hosts: ['*'], methods: ['delete'], paths: ['/x'] }]);
    expect(lower.match(undefined, 'DELETE', '/x')?.name).toBe('l');
    expect(lower.match(undefined, 'Delete', '/x')?.name).toBe('l');
  });

  test('a method with a lower-case letter is refused; any upper-case token passes', () => {
    expect(methodRefusal('post')).toBe('The method "post" is spelled with lower-case letters; send "POST".');
    expect(methodRefusal('M-search')).toBe(
      'The method "M-search" is spelled with lower-case letters; send "M-SEARCH".',
    );
    for (const method of ['GET', 'POST', 'M-SEARCH', 'PURGE', 'FOO', 'X1'])
      expect(methodRefusal(method)).toBe(undefined);
  });

  test('no route: undefined', () => {
    expect(
      new Router([{ hosts: ['*'], methods: ['*'], paths: ['/only'] }]).match('h', 'GET', '/other'),
    ).toBeUndefined();
  });
});

describe('patterns', () => {
  test('a path pattern agrees with its regular-expression meaning', () => {
    // Normalised paths (as the router passes them): segments of letters, single slashes.
    const segments = fc.stringMatching(/^([a-z]{1,3}\/?){0,3}$/);
    const escape = (text: string) => text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
    fc.assert(
      fc.property(segments, segments, fc.boolean(), (pattern, path, prefix) => {
        const re = prefix
          ? new RegExp(`^${escape(`/${pattern}`)}.*$`, 's')
          : new RegExp(`^${escape(`/${pattern}`.replace(/(.)\/$/, '$1'))}/?$`); // a trailing slash is optional
        expect(compilePath(`/${pattern}${prefix ? '*' : ''}`)(`/${path}`)).toBe(re.test(`/${path}`));
      }),
    );
  });

  test('hosts', () => {
    expect(compileHost('*')('anything')).toBe(true);
    expect(compileHost('*.a.com')('x.a.com')).toBe(true);
    expect(compileHost('*.a.com')('a.com')).toBe(false);
    expect(compileHost('*.a.com')('xa.com')).toBe(false);
    expect(compileHost('A.com')('a.com')).toBe(true);
    expect(normaliseHost('[::1]:8080')).toBe('[::1]');
    expect(normaliseHost('Analyzer.Localhost:80')).toBe('analyzer.localhost');
    expect(normaliseHost(undefined)).toBe('');
    expect(normaliseHost('a.example.')).toBe('a.example');
    expect(normaliseHost('a.example.:80')).toBe('a.example');
  });
});
