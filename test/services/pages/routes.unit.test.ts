// The statistics and report pages through fastify's inject, over a real SQLite file and an
// in-memory StatsSource: privacy modes, cookies, CSRF, CSV, escaping. The browser tests
// (test/services/websites/pages/stats-pages-browser.test.ts) drive the same pages through the gateway.
import type { FastifyInstance, LightMyRequestResponse } from 'fastify';
import { describe, expect } from 'vitest';
import { userForKey } from '../../../src/services/accounts/accounts.js';
import { CONTENT_SECURITY_POLICY } from '../../../src/services/pages/layout.js';
import { hashPassword } from '../../../src/services/accounts/passwords.js';
import { buildService } from '../../../src/services/registry.js';
import { insertReport } from '../../../src/services/reports/store.js';
import { WebsiteData } from '../../../src/services/websites/data.js';
import { ALICE_KEY, BOB_KEY } from '../../helpers/embedded.js';
import { servicesTest } from '../../helpers/fixtures.js';
import { MemoryStats } from '../../helpers/memory-stats.js';

const XSS = '/<script>alert(1)</script>"\'';
const HOST = 'stats.test';
const ORIGIN = `http://${HOST}`;
const RANGE = 'from=2026-11-01&to=2026-11-03';

/**
 * The database of the file: Alice's public, private and password sites (ids 1, 2, 3), with their
 * statistics in `stats`, and her public, private and password reports (ids 1, 2, 3).
 */
const test = servicesTest
  .extend('stats', { scope: 'file' }, async ({ services: { db } }) => {
    const alice = userForKey(db, ALICE_KEY)!;
    const data = new WebsiteData(db);
    const site = (url: string, privacy: number, passwordHash: string | null = null) =>
      data.insert(alice, {
        url,
        privacy,
        passwordHash,
        email: 0,
        excludeBots: 1,
        excludeParams: null,
        excludeIps: null,
      })!;
    const open = site('public.example', 0);
    site('private.example', 1);
    site('locked.example', 2, await hashPassword('s3cret'));
    const analysis = {
      result: 'decent' as const,
      score: 64,
      results: {
        title: { passed: false, importance: 'high' as const, value: XSS, errors: { too_long: 70 } },
      },
    } as never;
    const report = (pageUrl: string, privacy: number, passwordHash: string | null = null) =>
      insertReport(db, alice, { pageUrl, analysis, privacy, passwordHash });
    report('https://page.example/', 0);
    report('https://page.example/private', 1);
    report('https://page.example/locked', 2, await hashPassword('open sesame'));
    return new MemoryStats()
      .addDay(open.id, '2026-11-01', 3, 5)
      .addDay(open.id, '2026-11-02', 4, 9)
      .addValue(open.id, 'pages', '2026-11-01', '/', 3)
      .addValue(open.id, 'pages', '2026-11-02', XSS, 1)
      .addValue(open.id, 'pages', '2026-11-02', '/a,"b"', 1)
      .addValue(open.id, 'referrers', '2026-11-02', 'https://news.example/', 2);
  })
  .extend('websites', { scope: 'file' }, async ({ services, stats }, { onCleanup }) => {
    const app = await buildService('websites', { ...services, stats });
    onCleanup(() => app.close());
    return app;
  })
  // After `stats`, which holds the reports too.
  .extend('reports', { scope: 'file' }, async ({ services, stats: _seeded }, { onCleanup }) => {
    const app = await buildService('reports', services);
    onCleanup(() => app.close());
    return app;
  });

type Headers = Record<string, string>;
const get = (app: FastifyInstance, url: string, headers: Headers = {}) =>
  app.inject({ method: 'GET', url, headers: { host: HOST, ...headers } });
const post = (app: FastifyInstance, url: string, form: Record<string, string>, headers: Headers = {}) =>
  app.inject({
    method: 'POST',
    url,
    headers: { host: HOST, origin: ORIGIN, 'content-type': 'application/x-www-form-urlencoded', ...headers },
    payload: new URLSearchParams(form).toString(),
  });

/** The page with the whitespace between tags removed (the templates are formatted by prettier). */
const compact = (reply: LightMyRequestResponse) => reply.body.replace(/>\s+</g, '><');

/** The Cookie header that sends back the cookies a reply set. */
function cookiesOf(reply: LightMyRequestResponse): string {
  return reply.cookies.map((c) => `${c.name}=${c.value}`).join('; ');
}

async function signIn(app: FastifyInstance, key = ALICE_KEY): Promise<string> {
  const reply = await post(app, '/_/login', { key, next: '/' });
  expect(reply.statusCode).toBe(303);
  return cookiesOf(reply);
}

describe('statistics pages', () => {
  test('a public page: totals, the chart data, shares, escaped values, CSP', async ({ websites }) => {
    const reply = await get(websites, `/public.example?${RANGE}`);
    expect(reply.statusCode).toBe(200);
    expect(reply.headers['content-type']).toBe('text/html; charset=utf-8');
    expect(reply.headers['content-security-policy']).toBe(CONTENT_SECURITY_POLICY);
    expect(reply.headers['cache-control']).toBe('no-store');
    expect(compact(reply)).toContain('<strong id="total-visitors">7</strong>');
    expect(compact(reply)).toContain('<strong id="total-pageviews">14</strong>');
    expect(compact(reply)).toContain(
      '{"days":["2026-11-01","2026-11-02","2026-11-03"],"visitors":[3,4,0],"pageviews":[5,9,0],' +
        '"totals":{"visitors":7,"pageviews":14},"label":"2026-11-01 to 2026-11-03"}',
    );
    expect(compact(reply)).toContain(
      '<td class="value bar s20">/&lt;script&gt;alert(1)&lt;/script&gt;&quot;&#39;</td>',
    );
    expect(reply.body).not.toContain('<script>alert(1)');
    expect(compact(reply)).toContain('<td class="num">3</td><td class="num">60.0%</td>');
  });

  test('a sub-page shows one dimension with a CSV link', async ({ websites }) => {
    const reply = await get(websites, `/public.example/referrers?${RANGE}`);
    expect(reply.statusCode).toBe(200);
    expect(compact(reply)).toContain(
      '<td class="value bar s100">https://news.example/</td><td class="num">2</td>',
    );
    expect(compact(reply)).toContain(`href="/public.example/referrers.csv?${RANGE.replace('&', '&amp;')}"`);
  });

  test.for([`/public.example/pages.csv?${RANGE}`, `/public.example/pages?${RANGE}&format=csv`])(
    'CSV export %s',
    async (url, { websites }) => {
      const reply = await get(websites, url);
      expect(reply.statusCode).toBe(200);
      expect(reply.headers['content-type']).toBe('text/csv; charset=utf-8');
      expect(reply.headers['content-disposition']).toBe(
        'attachment; filename="public.example-pages-2026-11-01-2026-11-03.csv"',
      );
      expect(reply.body).toBe(
        'value,count,share\r\n/,3,60.0%\r\n"/<script>alert(1)</script>""\'",1,20.0%\r\n"/a,""b""",1,20.0%\r\n',
      );
    },
  );

  test('the realtime page counts every recent visit and lists the latest 100, escaped', async ({
    websites,
    stats,
  }) => {
    const at = new Date(Date.now() - 60_000).toISOString();
    const visit = (page: string) => ({
      at,
      page,
      referrer: null,
      country: 'DE',
      browser: 'Chrome',
      operatingSystem: 'Linux',
      device: 'desktop',
      visitor: true,
    });
    stats.visits.set(1, [visit(XSS), ...Array.from({ length: 100 }, (_, i) => visit(`/p${i}`))]);
    const reply = await get(websites, '/public.example/realtime');
    expect(reply.statusCode).toBe(200);
    const body = compact(reply);
    expect(body).toContain('<strong id="recent-visitors">101</strong>');
    expect(body).toContain('<strong id="recent-pageviews">101</strong>');
    expect(body).toContain('the latest 100 pageviews are listed');
    expect(body.match(/<th scope="row" class="short">/g)).toHaveLength(100);
    expect(body).toContain(
      '<td data-label="Page" class="value">/&lt;script&gt;alert(1)&lt;/script&gt;&quot;&#39;</td>',
    );
    expect(body).toContain('<td data-label="Referrer" class="muted value">–</td>');
    expect(body).toContain('<td data-label="Country" class="short">Germany</td>');
  });

  test('a bad range: 400 with the error and the default range', async ({ websites }) => {
    const reply = await get(websites, '/public.example?from=2026-11-05&to=2026-11-01');
    expect(reply.statusCode).toBe(400);
    expect(compact(reply)).toContain(
      '<p class="error range-error" role="alert">The start date must not be after the end date.</p>',
    );
  });

  test.for(['/unknown.example', '/public.example/nope', '/private.example', '/private.example/pages.csv'])(
    '%s: the HTML 404 page',
    async (url, { websites }) => {
      const reply = await get(websites, url);
      expect(reply.statusCode).toBe(404);
      expect(reply.headers['content-type']).toBe('text/html; charset=utf-8');
      expect(compact(reply)).toContain('<h1>Page not found</h1>');
    },
  );

  test.for(['/api', '/js', '/openapi.json', '/api/v1', '/js/other.js'])(
    '%s stays the API JSON 404',
    async (url, { websites }) => {
      const reply = await get(websites, url);
      expect(reply.statusCode).toBe(404);
      expect(reply.json()).toEqual({ message: 'Resource not found.', status: 404 });
    },
  );

  test('the owner signs in with an API key and sees a private page; sign-out ends it', async ({
    websites,
  }) => {
    const wrong = await post(websites, '/_/login', { key: 'tg_nope', next: '/private.example' });
    expect(wrong.statusCode).toBe(401);
    expect(compact(wrong)).toContain('That API key is not valid.');
    expect(wrong.cookies).toEqual([]);

    const reply = await post(websites, '/_/login', { key: ALICE_KEY, next: '/private.example' });
    expect(reply.statusCode).toBe(303);
    expect(reply.headers.location).toBe('/private.example');
    const [cookie] = reply.cookies;
    expect(cookie).toMatchObject({
      name: 'tg_session',
      path: '/',
      httpOnly: true,
      sameSite: 'Lax',
      maxAge: 43200,
    });
    expect(cookie!.secure).toBeUndefined();
    expect((await get(websites, '/private.example', { cookie: cookiesOf(reply) })).statusCode).toBe(200);

    const tampered = cookiesOf(reply).replace(/^tg_session=s\.\d+/, 'tg_session=s.2');
    expect((await get(websites, '/private.example', { cookie: tampered })).statusCode).toBe(404);

    const out = await post(websites, '/_/logout', {}, { cookie: cookiesOf(reply) });
    expect(out.statusCode).toBe(303);
    expect(out.cookies[0]).toMatchObject({ name: 'tg_session', value: '', path: '/' });
  });

  test('a return path a Location header cannot hold falls back to /, rather than a 500', async ({
    websites,
  }) => {
    const cookie = await signIn(websites);
    const signedIn = await get(websites, '/_/login?next=%2Fa%01b', { cookie });
    expect(signedIn.statusCode).toBe(303);
    expect(signedIn.headers.location).toBe('/');
    const login = await post(websites, '/_/login', { key: ALICE_KEY, next: '/\u0100' });
    expect(login.statusCode).toBe(303);
    expect(login.headers.location).toBe('/');
  });

  test("another user's session does not open a private page", async ({ websites }) => {
    const bob = await signIn(websites, BOB_KEY);
    expect((await get(websites, '/private.example', { cookie: bob })).statusCode).toBe(404);
  });

  test('behind HTTPS the cookie is Secure', async ({ websites }) => {
    const reply = await post(websites, '/_/login', { key: ALICE_KEY }, { 'x-forwarded-proto': 'https' });
    expect(reply.cookies[0]!.secure).toBe(true);
  });

  test('a password page: the form, a wrong password, then the page for this site only', async ({
    websites,
  }) => {
    const form = await get(websites, '/locked.example/pages');
    expect(form.statusCode).toBe(200);
    expect(compact(form)).toContain('action="/_/unlock/locked.example?next=%2Flocked.example%2Fpages"');

    const wrong = await post(websites, '/_/unlock/locked.example?next=%2Flocked.example%2Fpages', {
      password: 'nope',
    });
    expect(wrong.statusCode).toBe(401);
    expect(compact(wrong)).toContain('<p class="error" role="alert" id="password-error">Wrong password.</p>');
    expect(wrong.cookies).toEqual([]);

    const right = await post(websites, '/_/unlock/locked.example?next=%2Flocked.example%2Fpages', {
      password: 's3cret',
    });
    expect(right.statusCode).toBe(303);
    expect(right.headers.location).toBe('/locked.example/pages');
    expect(right.cookies[0]).toMatchObject({
      name: `tg_unlock_w${3}`,
      path: '/locked.example',
      httpOnly: true,
      sameSite: 'Lax',
      maxAge: 3600,
    });
    const page = await get(websites, '/locked.example/pages', { cookie: cookiesOf(right) });
    expect(page.statusCode).toBe(200);
    expect(compact(page)).toContain('<h1>locked.example <span class="muted">Pages</span></h1>');
  });

  test('an unlock POST leaves the site only for its own pages', async ({ websites }) => {
    const reply = await post(websites, '/_/unlock/locked.example?next=%2Fpublic.example', {
      password: 's3cret',
    });
    expect(reply.headers.location).toBe('/locked.example');
  });

  test.for<[string, Headers]>([
    ['another origin', { origin: 'http://evil.example' }],
    ['no origin nor referer', { origin: '' }],
  ])('a POST from %s is refused with 403', async ([, headers], { websites }) => {
    const reply = await post(websites, '/_/unlock/locked.example', { password: 's3cret' }, headers);
    expect(reply.statusCode).toBe(403);
    expect(reply.cookies).toEqual([]);
    const login = await post(websites, '/_/login', { key: ALICE_KEY }, headers);
    expect(login.statusCode).toBe(403);
  });

  test('an unlock POST for a public or private site is a 404', async ({ websites }) => {
    expect((await post(websites, '/_/unlock/public.example', { password: 'x' })).statusCode).toBe(404);
    expect((await post(websites, '/_/unlock/private.example', { password: 'x' })).statusCode).toBe(404);
  });

  test("the owner's list at /; without a session, the sign-in form", async ({ websites }) => {
    const anonymous = await get(websites, '/');
    expect(anonymous.statusCode).toBe(303);
    expect(anonymous.headers.location).toBe('/_/login?next=%2F');
    const list = await get(websites, '/', { cookie: await signIn(websites) });
    expect(list.statusCode).toBe(200);
    expect(compact(list)).toContain('<a href="/private.example">private.example</a></td><td>Private</td>');
  });

  test('uPlot is served from node_modules', async ({ websites }) => {
    const js = await get(websites, '/_/assets/uplot.min.js');
    expect(js.statusCode).toBe(200);
    expect(js.headers['content-type']).toBe('text/javascript; charset=utf-8');
    expect(js.body).toContain('uPlot');
    expect((await get(websites, '/_/assets/constructor')).statusCode).toBe(404);
  });
});

describe('report pages', () => {
  test('a public report: result, score, every check, escaped', async ({ reports }) => {
    const reply = await get(reports, '/1');
    expect(reply.statusCode).toBe(200);
    expect(reply.headers['content-security-policy']).toBe(CONTENT_SECURITY_POLICY);
    expect(compact(reply)).toContain('<dd class="verdict result-decent" id="result">Decent</dd>');
    expect(compact(reply)).toContain('<dd class="verdict" id="score">64</dd>');
    expect(compact(reply)).toContain(
      '<td data-label="Value" class="value">/&lt;script&gt;alert(1)&lt;/script&gt;&quot;&#39;</td>',
    );
    expect(compact(reply)).toContain('<p class="finding value">70 characters: longer than 60.</p>');
  });

  test('a private report: 404 to strangers, shown to its owner', async ({ reports }) => {
    expect((await get(reports, '/2')).statusCode).toBe(404);
    expect((await get(reports, '/2', { cookie: await signIn(reports, BOB_KEY) })).statusCode).toBe(404);
    expect((await get(reports, '/2', { cookie: await signIn(reports) })).statusCode).toBe(200);
  });

  test('a password report', async ({ reports }) => {
    expect((await get(reports, '/3')).body).toContain('action="/_/unlock/3"');
    expect((await post(reports, '/_/unlock/3', { password: 'nope' })).statusCode).toBe(401);
    const right = await post(reports, '/_/unlock/3', { password: 'open sesame' });
    expect(right.statusCode).toBe(303);
    expect(right.cookies[0]).toMatchObject({ name: 'tg_unlock_r3', path: '/3' });
    expect((await get(reports, '/3', { cookie: cookiesOf(right) })).statusCode).toBe(200);
    // An unlocked report does not open another.
    expect((await get(reports, '/2', { cookie: cookiesOf(right) })).statusCode).toBe(404);
  });

  test('the list shows which pages are public', async ({ reports }) => {
    const list = await get(reports, '/', { cookie: await signIn(reports) });
    expect(list.statusCode).toBe(200);
    expect(compact(list)).toMatch(/<a href="\/1">page\.example<\/a>[^]*?<td>Public<\/td>/);
    expect(compact(list)).toMatch(/<a href="\/2">page\.example\/private<\/a>[^]*?<td>Private<\/td>/);
    expect(compact(list)).toMatch(/<a href="\/3">page\.example\/locked<\/a>[^]*?<td>Password<\/td>/);
  });

  test.for(['/999', '/0'])('%s: the HTML 404 page', async (url, { reports }) => {
    const reply = await get(reports, url);
    expect(reply.statusCode).toBe(404);
    expect(compact(reply)).toContain('<h1>Page not found</h1>');
  });

  test('a non-numeric path stays the API JSON 404', async ({ reports }) => {
    expect((await get(reports, '/abc')).json()).toEqual({ message: 'Resource not found.', status: 404 });
  });
});
