import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import type { ServerResponse } from 'node:http';
import { sendError } from '../http/responses.js';
import { TOP_KEYS } from '../metrics/near-limit.js';
import type { AdminRoute } from './admin-api.js';
import { viewOf, type OperatorSource, type OperatorView } from './admin-operator.js';
import { OPERATOR_SCRIPT, OPERATOR_STYLE } from './admin-operator-assets.js';

/**
 * The operator's page on the admin listener (GET /ui; / stays a 404, as it always was): rendered on the server from the same
 * view as GET /v1/operator; a small script refreshes it and charts the decision rates with uPlot,
 * served from node_modules as the statistics pages serve it. No inline script or style, no other
 * origin: the CSP says so. Reads need nothing; the one action (lifting a ban) sends the admin token.
 */

const require = createRequire(import.meta.url);
const fromPackage = (path: string) => readFileSync(require.resolve(path), 'utf8');

const CSP =
  "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; " +
  "base-uri 'none'; form-action 'none'; frame-ancestors 'none'";

interface Asset {
  readonly type: string;
  readonly body: string;
}

let assets: Map<string, Asset> | undefined;
/** Read on the first request for one: a gateway whose page is never opened never reads uPlot. */
const assetsOf = (): Map<string, Asset> =>
  (assets ??= new Map([
    ['uplot.min.js', { type: 'text/javascript', body: fromPackage('uplot/dist/uPlot.iife.min.js') }],
    ['uplot.min.css', { type: 'text/css', body: fromPackage('uplot/dist/uPlot.min.css') }],
    ['operator.js', { type: 'text/javascript', body: OPERATOR_SCRIPT }],
    ['operator.css', { type: 'text/css', body: OPERATOR_STYLE }],
  ]));

export function operatorPageRoutes(source: OperatorSource): AdminRoute[] {
  const page = async (res: ServerResponse) => {
    const body = renderPage(await viewOf(source));
    res.writeHead(200, {
      'content-type': 'text/html; charset=utf-8',
      'content-length': String(Buffer.byteLength(body)),
      'content-security-policy': CSP,
      'cache-control': 'no-store',
      'x-content-type-options': 'nosniff',
      'referrer-policy': 'no-referrer',
    });
    res.end(body);
  };
  return [
    { method: 'GET', path: '/ui', handle: (_req, res) => page(res) },
    {
      method: 'GET',
      path: '/ui/',
      handle: (_req, res, rest) => {
        const asset = assetsOf().get(rest);
        if (!asset) return sendError(res, 404, 'not_found', 'No such admin path: see docs/admin.md.');
        res.writeHead(200, {
          'content-type': `${asset.type}; charset=utf-8`,
          'content-length': String(Buffer.byteLength(asset.body)),
          'cache-control': 'max-age=300',
          'x-content-type-options': 'nosniff',
        });
        res.end(asset.body);
      },
    },
  ];
}

const ESCAPES: Record<string, string> = {
  '&': '&amp;',
  '<': '&lt;',
  '>': '&gt;',
  '"': '&quot;',
  "'": '&#39;',
};
const esc = (v: unknown): string => String(v).replace(/[&<>"']/g, (c) => ESCAPES[c]!);
const num = (n: number): string => n.toLocaleString('en-US');

/** The decisions shown as columns; every other (401, caps, bans, body bounds, …) is summed as refused. */
const COLUMNS = ['allowed', 'limited', 'shadow_limited', 'exempt', 'store_error'] as const;

export function renderPage(v: OperatorView): string {
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>tollgate operator</title>
<link rel="stylesheet" href="/ui/uplot.min.css">
<link rel="stylesheet" href="/ui/operator.css">
<script src="/ui/uplot.min.js" defer></script>
<script src="/ui/operator.js" defer></script>
</head>
<body>
<header><h1>tollgate operator</h1><p class="note">${scopeNote(v)}; refreshed every few seconds. Reads need no token.</p></header>
<section id="rates-section"><h2>Decisions per second</h2><div id="rates" class="chart" role="img" aria-label="Decisions per second, all limiters"></div><p id="rates-status" class="note">Measuring rates…</p></section>
<div id="live">${renderLive(v)}</div>
${renderActions()}
</body>
</html>
`;
}

/** Whose figures the page shows: this instance's, or the sum of the workers of a `workers: N` primary. */
const scopeNote = (v: OperatorView): string =>
  v.workers
    ? `<span id="scope">The sum of this instance's ${v.workers.count} workers (${v.workers.answered} answered)</span>`
    : '<span id="scope">This instance only</span>';

/** What the script swaps in at each refresh. */
function renderLive(v: OperatorView): string {
  const totals = v.limiters.map((l) => ({ name: l.name, ...splitDecisions(l.decisions) }));
  return `<script type="application/json" id="totals">${JSON.stringify({ now: v.now, totals }).replace(/</g, '\\u003c')}</script>
${renderStatus(v)}
<section><h2>Limiters</h2>
<table id="limiters"><thead><tr><th>limiter</th>${COLUMNS.map((c) => `<th class="num">${c}</th>`).join('')}<th class="num">refused</th><th class="num">rate /s (allowed · limited · exempt · refused)</th></tr></thead>
<tbody>${totals
    .map(
      (t, i) =>
        `<tr><th scope="row">${esc(t.name)}${v.limiters[i]!.shadow ? ' <span class="tag">shadow</span>' : ''}</th>${COLUMNS.map((c) => `<td class="num">${num(t[c])}</td>`).join('')}<td class="num">${num(t.refused)}</td><td class="num rate" data-limiter="${esc(t.name)}">–</td></tr>`,
    )
    .join('\n')}</tbody></table></section>
<section><h2>How close keys are to their limits</h2>
<p class="note">Requests by the share of the window's limit their key had used once counted.</p>
<table id="usage"><thead><tr><th>limiter</th><th>window</th><th class="num">limit</th><th class="num">0–50 %</th><th class="num">50–80 %</th><th class="num">80–100 %</th><th class="num">refused</th><th>near the limit</th></tr></thead>
<tbody>${v.limiters
    .flatMap((l) =>
      l.windows.map((w) => {
        const all = w.usage['0-50'] + w.usage['50-80'] + w.usage['80-100'] + w.usage.refused;
        const near = w.usage['80-100'] + w.usage.refused;
        return `<tr><th scope="row">${esc(l.name)}</th><td>${esc(w.window)}${w.algorithm === 'fixed' ? '' : ` ${esc(w.algorithm)}`}</td><td class="num">${num(w.limit)}</td><td class="num">${num(w.usage['0-50'])}</td><td class="num">${num(w.usage['50-80'])}</td><td class="num">${num(w.usage['80-100'])}</td><td class="num">${num(w.usage.refused)}</td><td><meter min="0" max="${Math.max(all, 1)}" value="${near}" title="${near} of ${all}"></meter> ${all ? Math.round((100 * near) / all) : 0} %</td></tr>`;
      }),
    )
    .join('\n')}</tbody></table></section>
<section><h2>Heaviest keys</h2><p class="note">Per limiter, the ${TOP_KEYS} keys counted most here (space-saving: a count may overestimate by its error). Keys are hashed, as in the <code>pk</code> of the RateLimit header.</p>
${
  v.limiters
    .filter((l) => l.top.length > 0)
    .map(
      (l) =>
        `<details open><summary>${esc(l.name)}</summary><table class="top"><thead><tr><th>key</th><th class="num">requests</th><th class="num">± error</th><th>key parts</th></tr></thead><tbody>${l.top
          .map(
            (k) =>
              `<tr><td><code>${esc(k.key)}</code></td><td class="num">${num(k.count)}</td><td class="num">${num(k.error)}</td><td>${
                k.parts
                  ? Object.entries(k.parts)
                      .map(([p, h]) => `<code>${esc(p)}=${esc(h)}</code>`)
                      .join(' ')
                  : `<span class="note">${esc(l.keyParts ?? '')}</span>`
              }</td></tr>`,
          )
          .join('')}</tbody></table></details>`,
    )
    .join('\n') || '<p class="note">No key counted yet.</p>'
}</section>
<section><h2>Recent refusals</h2>
${
  v.refusals.length === 0
    ? '<p class="note">None since start.</p>'
    : `<table id="refusals"><thead><tr><th>time</th><th>route</th><th>limiter</th><th>decision</th><th>key</th></tr></thead><tbody>${v.refusals
        .map(
          (r) =>
            `<tr><td>${esc(r.at)}</td><td>${esc(r.route)}</td><td>${esc(r.limiter)}</td><td>${esc(r.decision)}</td><td>${r.key ? `<code>${esc(r.key)}</code>` : ''}</td></tr>`,
        )
        .join('')}</tbody></table>`
}</section>`;
}

function renderStatus(v: OperatorView): string {
  const s = v.store;
  const mean = s.latency.count ? (1000 * s.latency.sum) / s.latency.count : 0;
  const reload = v.config.lastReload;
  const changes = reload
    ? (['limiters', 'routes'] as const)
        .map((what) => {
          const c = reload.changes[what];
          const lines = [
            ...c.added.map((n) => `+ ${what.slice(0, -1)} ${n}`),
            ...c.removed.map((n) => `− ${what.slice(0, -1)} ${n}`),
            ...c.changed.map((x) => `~ ${what.slice(0, -1)} ${x.name}: ${x.from} → ${x.to}`),
          ];
          return lines.map((l) => `<li>${esc(l)}</li>`).join('');
        })
        .join('')
    : '';
  return `<section id="status" class="cards">
<div class="card"><h2>Store</h2><p class="${s.ready ? 'ok' : 'bad'}" id="store-ready">${s.ready ? 'ready' : `not ready: ${esc('reason' in s ? s.reason : '')}`}</p>
<p>${num(s.latency.count)} round trips, mean ${mean.toFixed(2)} ms, ${num(s.errors)} errors</p>
<table class="latency"><thead><tr><th>≤ s</th><th class="num">round trips</th></tr></thead><tbody>${s.latency.buckets
    .map((b) => `<tr><td>${esc(b.le)}</td><td class="num">${num(b.count)}</td></tr>`)
    .join('')}</tbody></table></div>
<div class="card"><h2>Config</h2><p>version <code id="config-version">${esc(v.config.version)}</code></p>
${reload ? `<p>last reload ${esc(reload.at)}</p><ul class="diff">${changes || '<li>no rule changed</li>'}</ul>` : '<p class="note">Not reloaded since start.</p>'}</div>
</section>`;
}

function renderActions(): string {
  return `<section id="actions"><h2>Actions</h2>
<p class="note">Anything that changes state needs the admin token (admin.token); it is kept in this page only.</p>
<form id="lift-ban"><label>Admin token <input type="password" name="token" autocomplete="off"></label>
<label>Limiter <input name="limiter"></label><label>Key <input name="key"></label>
<button type="submit">Lift ban</button> <output id="action-result"></output></form></section>`;
}

/** A limiter's decision totals: the shown columns, and every other decision summed as refused. */
function splitDecisions(d: Record<string, number>): Record<(typeof COLUMNS)[number] | 'refused', number> {
  const row = { allowed: 0, limited: 0, shadow_limited: 0, exempt: 0, store_error: 0, refused: 0 };
  for (const [decision, n] of Object.entries(d)) {
    if ((COLUMNS as readonly string[]).includes(decision)) row[decision as (typeof COLUMNS)[number]] += n;
    else row.refused += n;
  }
  return row;
}
