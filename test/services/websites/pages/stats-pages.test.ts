// The statistics and report pages over plain HTTP through the shipped config's gateway (embedded
// services, a real SQLite file): exact statuses, headers, cookies, CSV, and the 429 of the
// password and sign-in forms' limiter.
import { describe, expect } from 'vitest';
import { CONTENT_SECURITY_POLICY } from '../../../../src/services/pages/layout.js';
import { clientAddresses, rateLimitedBody } from '../../../helpers/clients.js';
import { ALICE_KEY } from '../../../helpers/embedded.js';
import { embeddedTest } from '../../../helpers/fixtures.js';
import { send, type Reply } from '../../../helpers/gateway.js';
import { dayOf } from '../../../../src/services/websites/analytics/days.js';
import { REPORT_PASSWORD, seed, SITE_PASSWORD, SITES, XSS, type Seeded } from '../../../helpers/pages.js';

const LIMITED = 'Too many password attempts. Please try again later.';
const ANALYZER = 'analyzer.localhost';

/** The seed's clock: its visits are at this time less whole days (and one minute). */
const NOW = Date.now();
const newClient = clientAddresses('203.0.113.');

const test = embeddedTest({ env: { TRUSTED_PROXIES: '127.0.0.1' } })
  .extend('seeded', { scope: 'file' }, ({ gateway, dataDir }): Promise<Seeded> =>
    seed(gateway.url(), dataDir, NOW),
  )
  /** The gateway's URL, once the seed is in: every test reads it. */
  .extend('base', { scope: 'file' }, ({ gateway, seeded: _seeded }) => gateway.url())
  .extend(
    'get',
    { scope: 'file' },
    ({ base }) =>
      (path: string, headers: Record<string, string> = {}) =>
        send(`${base}${path}`, { headers: { 'x-forwarded-for': newClient(), ...headers } }),
  )
  .extend(
    'postForm',
    { scope: 'file' },
    ({ base }) =>
      function postForm(
        path: string,
        form: Record<string, string>,
        headers: Record<string, string> = {},
      ): Promise<Reply> {
        const host = headers.host ?? new URL(base).host;
        return send(`${base}${path}`, {
          method: 'POST',
          headers: {
            'content-type': 'application/x-www-form-urlencoded',
            origin: `http://${host}`,
            'x-forwarded-for': newClient(),
            ...headers,
          },
          body: new URLSearchParams(form).toString(),
        });
      },
  );

/** The page's markup with whitespace around tags removed and runs of it as one space. */
const squeeze = (text: string) => text.replace(/\s+/g, ' ').replace(/> /g, '>').replace(/ </g, '<');

/** The name=value of a Set-Cookie header, for sending it back. */
const cookiePair = (setCookie: string) => setCookie.split(';')[0]!;

describe('statistics pages', () => {
  test('a public page: HTML, the pages headers, the recorded visits, escaped values', async ({ get }) => {
    const reply = await get(`/${SITES.public}`);
    expect(reply.status).toBe(200);
    expect(reply.headers).toMatchObject({
      'content-type': 'text/html; charset=utf-8',
      'content-security-policy': CONTENT_SECURITY_POLICY,
      'x-content-type-options': 'nosniff',
      'referrer-policy': 'same-origin',
      'cache-control': 'no-store',
    });
    const body = reply.text.replace(/>\s+</g, '><');
    expect(body).toContain('<strong id="total-visitors">5</strong>');
    expect(body).toContain('<strong id="total-pageviews">6</strong>');
    expect(body).toContain(
      '<td class="value bar s17">/&lt;img src=x onerror=&quot;document.title=&#39;pwned&#39;&quot;&gt;</td>',
    );
    expect(body).not.toContain('<img src=x');
  });

  test('the overview: visitors and pageviews by UTC hour of the range, all 24 hours', async ({ get }) => {
    const reply = await get(`/${SITES.public}`);
    expect(reply.status).toBe(200);
    const body = squeeze(reply.text);
    // The seed's visits within the range: [hours ago in days, visitor?].
    const day = 86_400_000;
    const counts = Array.from({ length: 24 }, () => ({ visitors: 0, pageviews: 0 }));
    for (const [at, visitor] of [
      [NOW - 2 * day, true],
      [NOW - 2 * day, true],
      [NOW - day, true],
      [NOW - day, true],
      [NOW - 60_000, true],
      [NOW - 60_000, false],
    ] as const) {
      const hour = counts[new Date(at).getUTCHours()]!;
      hour.pageviews += 1;
      if (visitor) hour.visitors += 1;
    }
    const rows = counts
      .map(
        (c, h) =>
          `<tr><th scope="row">${String(h).padStart(2, '0')}:00</th><td class="num">${c.visitors}</td><td class="num">${c.pageviews}</td></tr>`,
      )
      .join('');
    expect(body).toContain(
      `<details id="hours"><summary>Hours of the day</summary><table><caption>Visitors and pageviews per UTC hour, summed over the range</caption>` +
        `<thead><tr><th scope="col">Hour (UTC)</th><th scope="col" class="num">Visitors</th><th scope="col" class="num">Pageviews</th></tr></thead>` +
        `<tbody>${rows}</tbody></table></details>`,
    );
    // A range without visits: 24 rows of zeros.
    const empty = squeeze((await get(`/${SITES.public}?from=2020-01-01&to=2020-01-31`)).text);
    const hours = empty.slice(
      empty.indexOf('<details id="hours">'),
      empty.indexOf('<section id="top-lists"'),
    );
    expect(hours.match(/<td class="num">0<\/td><td class="num">0<\/td><\/tr>/g)).toHaveLength(24);
  });

  test('the search of a dimension page: the matching rows, kept in the CSV link and the range form', async ({
    get,
  }) => {
    const today = dayOf(NOW);
    const from = dayOf(NOW - 29 * 86_400_000);
    const reply = await get(`/${SITES.public}/pages?search=PRIC`);
    expect(reply.status).toBe(200);
    const body = squeeze(reply.text);
    expect(body).toContain(
      `<form class="range" method="get" action="/${SITES.public}/pages" role="search" aria-label="Search pages">` +
        `<input type="hidden" name="from" value="${from}" /><input type="hidden" name="to" value="${today}" />` +
        `<label >Search pages<input type="search" name="search" value="PRIC" maxlength="255" /></label>` +
        `<button type="submit">Search</button><a href="/${SITES.public}/pages?from=${from}&amp;to=${today}">Clear search</a></form>`,
    );
    expect(body).toContain('<input type="hidden" name="search" value="PRIC" />');
    expect(body).toContain(
      `<p>1 values matching<q id="search-term">PRIC</q>, 1 in all.<a href="/${SITES.public}/pages.csv?from=${from}&amp;to=${today}&amp;search=PRIC" download>Download CSV</a>`,
    );
    expect(body.match(/<td class="value[^"]*">[^<]*<\/td>/g)).toEqual([
      '<td class="value bar s100">/pricing</td>',
    ]);

    const csv = await get(`/${SITES.public}/pages.csv?from=${from}&to=${today}&search=PRIC`);
    expect(csv.status).toBe(200);
    expect(csv.text).toBe(['value,count,share', '/pricing,1,100.0%', ''].join('\r\n'));
    const none = await get(`/${SITES.public}/referrers?search=nothing-like-it`);
    expect(none.status).toBe(200);
    expect(none.text.replace(/>\s+</g, '><')).toContain(
      '<td colspan="3" class="muted">No data for this range.</td>',
    );
  });

  test('a search with markup is shown as text in the field, the summary and the links', async ({ get }) => {
    const reply = await get(`/${SITES.public}/referrers?search=${encodeURIComponent(XSS)}`);
    expect(reply.status).toBe(200);
    const escaped = '&lt;img src=x onerror=&quot;document.title=&#39;pwned&#39;&quot;&gt;';
    const body = squeeze(reply.text);
    expect(body).toContain(`<input type="search" name="search" value="${escaped}" maxlength="255" />`);
    expect(body).toContain(`<input type="hidden" name="search" value="${escaped}" />`);
    expect(body).toContain(`<q id="search-term">${escaped}</q>`);
    expect(body).toContain(`&amp;search=${encodeURIComponent(XSS).replace(/'/g, '&#39;')}" download>`);
    expect(body).toContain(`<td class="value bar s100">${escaped}</td>`);
    expect(body).not.toContain('<img src=x');
  });

  test('the CSV of a dimension: exact headers and rows, CSV-escaped', async ({ get }) => {
    const reply = await get(`/${SITES.public}/pages.csv`);
    expect(reply.status).toBe(200);
    expect(reply.headers['content-type']).toBe('text/csv; charset=utf-8');
    expect(reply.headers['content-disposition']).toMatch(
      /^attachment; filename="public\.example-pages-\d{4}-\d{2}-\d{2}-\d{4}-\d{2}-\d{2}\.csv"$/,
    );
    expect(reply.text).toBe(
      [
        'value,count,share',
        '/,3,50.0%',
        `"/<img src=x onerror=""document.title='pwned'"">",1,16.7%`,
        '"/docs,""quoted""",1,16.7%',
        '/pricing,1,16.7%',
        '',
      ].join('\r\n'),
    );
  });

  test.for(['/unknown.example', `/${SITES.private}`, `/${SITES.private}/pages.csv`, `/${SITES.public}/nope`])(
    '%s: the HTML 404 page for a stranger',
    async (path, { get }) => {
      const reply = await get(path);
      expect(reply.status).toBe(404);
      expect(reply.headers['content-type']).toBe('text/html; charset=utf-8');
      expect(reply.headers['content-security-policy']).toBe(CONTENT_SECURITY_POLICY);
      expect(reply.text).toContain('<h1>Page not found</h1>');
    },
  );

  test.for(['/api/v1/nope', '/js', '/openapi.json'])(
    '%s stays a JSON 404 of the API',
    async (path, { get }) => {
      const reply = await get(path);
      expect(reply.status).toBe(404);
      expect(reply.json()).toEqual({ message: 'Resource not found.', status: 404 });
    },
  );

  test('sign-in: a signed HttpOnly SameSite=Lax session cookie with a bounded lifetime', async ({
    postForm,
    get,
  }) => {
    const reply = await postForm('/_/login', { key: ALICE_KEY, next: `/${SITES.private}` });
    expect(reply.status).toBe(303);
    expect(reply.headers.location).toBe(`/${SITES.private}`);
    expect(reply.headers['set-cookie']).toMatch(
      /^tg_session=s\.1\.\d{13}\.[A-Za-z0-9_-]{16}\.[A-Za-z0-9+/]{43}; Max-Age=43200; Path=\/; HttpOnly; SameSite=Lax$/,
    );
    const cookie = cookiePair(reply.headers['set-cookie']!);
    expect((await get(`/${SITES.private}`, { cookie })).status).toBe(200);
    const out = await postForm('/_/logout', {}, { cookie });
    expect(out.status).toBe(303);
    expect(out.headers['set-cookie']).toBe(
      'tg_session=; Max-Age=0; Path=/; Expires=Thu, 01 Jan 1970 00:00:00 GMT; HttpOnly; SameSite=Lax',
    );
  });

  test('the password form: 401 on a wrong password, then a cookie for this site only', async ({
    postForm,
    seeded,
    get,
  }) => {
    const wrong = await postForm(`/_/unlock/${SITES.locked}`, { password: 'nope' });
    expect(wrong.status).toBe(401);
    expect(wrong.headers['set-cookie']).toBeUndefined();
    expect(wrong.text).toContain('Wrong password.');
    const right = await postForm(`/_/unlock/${SITES.locked}`, { password: SITE_PASSWORD });
    expect(right.status).toBe(303);
    expect(right.headers['set-cookie']).toMatch(
      new RegExp(
        `^tg_unlock_w${seeded.siteIds.locked}=w\\.${seeded.siteIds.locked}\\.\\d{13}\\.[\\w-]{16}\\.[A-Za-z0-9+/]{43}; Max-Age=3600; Path=/locked\\.example; HttpOnly; SameSite=Lax$`,
      ),
    );
    const cookie = cookiePair(right.headers['set-cookie']!);
    expect((await get(`/${SITES.locked}/pages`, { cookie })).status).toBe(200);
  });

  test('a POST from another origin is refused with 403', async ({ postForm }) => {
    const reply = await postForm('/_/login', { key: ALICE_KEY }, { origin: 'http://evil.example' });
    expect(reply.status).toBe(403);
    expect(reply.headers['set-cookie']).toBeUndefined();
  });

  test('the 11th password attempt of a minute from one IP gets 429', async ({ postForm }) => {
    const ip = newClient();
    for (let i = 0; i < 10; i++) {
      const reply = await postForm(
        `/_/unlock/${SITES.locked}`,
        { password: `guess ${i}` },
        { 'x-forwarded-for': ip },
      );
      expect(reply.status).toBe(401);
      expect(reply.headers['x-ratelimit-remaining']).toBe(String(9 - i));
    }
    const limited = await postForm(`/_/login`, { key: 'tg_guess' }, { 'x-forwarded-for': ip });
    expect(limited.status).toBe(429);
    expect(limited.text).toBe(rateLimitedBody(LIMITED));
    expect(limited.headers['x-ratelimit-limit']).toBe('10');
  });
});

describe('report pages', () => {
  const analyzer = { host: ANALYZER };

  test('a public report shows the result, the score and every check, escaped', async ({ get, seeded }) => {
    const reply = await get(`/${seeded.reports.public}`, analyzer);
    expect(reply.status).toBe(200);
    expect(reply.headers['content-security-policy']).toBe(CONTENT_SECURITY_POLICY);
    const body = reply.text.replace(/>\s+</g, '><');
    expect(body).toMatch(/<dd class="verdict result-(good|decent|bad)" id="result">(Good|Decent|Bad)<\/dd>/);
    expect(body.match(/<tr data-check="/g)).toHaveLength(18);
    expect(body).toContain('&lt;img src=x onerror=&quot;document.title=&#39;pwned&#39;&quot;&gt;');
    expect(body).not.toContain('<img src=x');
  });

  test('a private report is a 404 to a stranger, a password one shows its form', async ({ get, seeded }) => {
    expect((await get(`/${seeded.reports.private}`, analyzer)).status).toBe(404);
    expect((await get('/999999', analyzer)).status).toBe(404);
    const form = await get(`/${seeded.reports.locked}`, analyzer);
    expect(form.status).toBe(200);
    expect(form.text).toContain(`action="/_/unlock/${seeded.reports.locked}"`);
  });

  test('the password of a report page opens it', async ({ postForm, seeded, get }) => {
    const headers = { host: ANALYZER };
    const wrong = await postForm(`/_/unlock/${seeded.reports.locked}`, { password: 'x' }, headers);
    expect(wrong.status).toBe(401);
    const right = await postForm(
      `/_/unlock/${seeded.reports.locked}`,
      { password: REPORT_PASSWORD },
      headers,
    );
    expect(right.status).toBe(303);
    const cookie = cookiePair(right.headers['set-cookie']!);
    expect((await get(`/${seeded.reports.locked}`, { ...analyzer, cookie })).status).toBe(200);
  });

  test('the report password form is limited too', async ({ postForm, seeded }) => {
    const ip = newClient();
    const headers = { host: ANALYZER, 'x-forwarded-for': ip };
    for (let i = 0; i < 10; i++)
      expect((await postForm(`/_/unlock/${seeded.reports.locked}`, { password: 'x' }, headers)).status).toBe(
        401,
      );
    const limited = await postForm(`/_/unlock/${seeded.reports.locked}`, { password: 'x' }, headers);
    expect(limited.status).toBe(429);
    expect(limited.text).toBe(rateLimitedBody(LIMITED));
  });
});
