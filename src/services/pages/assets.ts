import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import type { FastifyInstance } from 'fastify';
import { CHART_SCRIPT, LIVE_SCRIPT } from './chart-script.js';
import { STATS_STYLE } from './stats-style.js';

/**
 * The pages' static files, served by the service itself under /_/assets/ (no CDN, no build step):
 * uPlot's script and style from node_modules, the pages' style sheet and the statistics scripts.
 * "_" cannot start a website's host, so these paths never shadow a statistics page.
 */

const require = createRequire(import.meta.url);
const fromPackage = (path: string) => readFileSync(require.resolve(path), 'utf8');

declare module 'fastify' {
  interface FastifyContextConfig {
    /** A route of the HTML pages (not in the OpenAPI document). */
    page?: boolean;
  }
}

/** The options of every route of the pages. */
export const PAGE_ROUTE = { config: { page: true } } as const;

export const ASSETS_PREFIX = '/_/assets';

/** Dark text on light backgrounds: every pair at least 4.5:1 (WCAG AA). */
const STYLE = `
:root { --fg: #1b1f24; --muted: #4a5260; --bg: #ffffff; --panel: #f4f6f8; --line: #d0d5dc;
  --accent: #0b57d0; --good: #146c2e; --decent: #8a5300; --bad: #b3261e; }
* { box-sizing: border-box; }
body { margin: 0; font: 16px/1.5 system-ui, -apple-system, "Segoe UI", Roboto, sans-serif; color: var(--fg); background: var(--bg); }
a { color: var(--accent); }
a:focus-visible, button:focus-visible, input:focus-visible { outline: 3px solid var(--accent); outline-offset: 2px; }
header, main, footer { max-width: 72rem; margin: 0 auto; padding: 0.75rem 1rem; }
header { display: flex; flex-wrap: wrap; gap: 0.5rem 1rem; align-items: baseline; justify-content: space-between; border-bottom: 1px solid var(--line); }
header .brand { font-weight: 700; text-decoration: none; color: var(--fg); }
header form { margin: 0; }
h1 { font-size: 1.5rem; margin: 0.5rem 0; overflow-wrap: anywhere; }
h2 { font-size: 1.15rem; margin: 1.25rem 0 0.5rem; }
nav.sections ul { list-style: none; padding: 0; margin: 0.5rem 0; display: flex; flex-wrap: wrap; gap: 0.25rem 0.5rem; }
nav.sections a { display: inline-block; padding: 0.2rem 0.55rem; border: 1px solid var(--line); border-radius: 1rem; text-decoration: none; }
nav.sections a[aria-current="page"] { background: var(--accent); border-color: var(--accent); color: #fff; }
form.range { display: flex; flex-wrap: wrap; gap: 0.5rem 1rem; align-items: end; background: var(--panel); padding: 0.75rem; border-radius: 0.5rem; }
form.range .error { flex-basis: 100%; margin: 0; } /* the range's error takes a row of its own */
form.range label, form.stack label { display: flex; flex-direction: column; font-size: 0.9rem; color: var(--muted); }
input { font: inherit; padding: 0.35rem 0.5rem; border: 1px solid #6b7380; border-radius: 0.3rem; color: var(--fg); background: #fff; }
button { font: inherit; padding: 0.4rem 0.9rem; border: 1px solid var(--accent); border-radius: 0.3rem; background: var(--accent); color: #fff; cursor: pointer; }
button.link { background: none; border: none; color: var(--accent); padding: 0; text-decoration: underline; }
form.stack { display: flex; flex-direction: column; gap: 0.75rem; max-width: 22rem; }
.error { color: var(--bad); font-weight: 600; }
.totals { display: flex; flex-wrap: wrap; gap: 1rem; margin: 1rem 0; padding: 0; list-style: none; }
.totals li, .totals > div { background: var(--panel); padding: 0.6rem 1rem; border-radius: 0.5rem; min-width: 9rem; }
.totals strong, .totals dd { display: block; font-size: 1.5rem; font-weight: 700; margin: 0; }
.chart { min-height: 240px; width: 100%; overflow: hidden; }
.grid { display: grid; grid-template-columns: repeat(auto-fit, minmax(min(100%, 20rem), 1fr)); gap: 0 1.5rem; }
table { width: 100%; border-collapse: collapse; margin: 0.5rem 0 1rem; font-size: 0.95rem; }
caption { text-align: left; font-weight: 600; padding: 0.25rem 0; }
th, td { text-align: left; padding: 0.35rem 0.5rem; border-bottom: 1px solid var(--line); vertical-align: top; }
td.value { overflow-wrap: anywhere; word-break: break-word; }
td.about p { margin: 0 0 0.4rem; } td.about p.finding { font-weight: 600; }
th.num, td.num { text-align: right; white-space: nowrap; }
.result-good { color: var(--good); } .result-decent { color: var(--decent); } .result-bad { color: var(--bad); }
.verdict { font-weight: 600; }
.muted { color: var(--muted); }
@media (max-width: 40rem) {
  body { font-size: 15px; } th, td { padding: 0.3rem 0.35rem; }
  /* A wide table becomes one block per row, each cell labelled. */
  table.stacked thead { position: absolute; width: 1px; height: 1px; overflow: hidden; clip-path: inset(50%); }
  table.stacked tr { display: block; border-bottom: 1px solid var(--line); padding: 0.4rem 0; }
  table.stacked th, table.stacked td { display: block; border: none; padding: 0.1rem 0; }
  table.stacked td[data-label]::before { content: attr(data-label) ": "; color: var(--muted); font-weight: 400; }
  table.stacked td:empty { display: none; }
}
`;

interface Asset {
  readonly type: string;
  readonly body: string;
}

export function registerAssets(app: FastifyInstance): void {
  const js = 'text/javascript; charset=utf-8';
  const css = 'text/css; charset=utf-8';
  const assets = new Map<string, Asset>([
    ['uplot.min.js', { type: js, body: fromPackage('uplot/dist/uPlot.iife.min.js') }],
    ['uplot.min.css', { type: css, body: fromPackage('uplot/dist/uPlot.min.css') }],
    ['pages.css', { type: css, body: STYLE + STATS_STYLE }],
    ['chart.js', { type: js, body: CHART_SCRIPT }],
    ['live.js', { type: js, body: LIVE_SCRIPT }],
  ]);
  app.get(`${ASSETS_PREFIX}/:name`, PAGE_ROUTE, async (request, reply) => {
    const asset = assets.get((request.params as { name: string }).name);
    if (!asset) return reply.callNotFound();
    return reply
      .header('content-type', asset.type)
      .header('cache-control', 'public, max-age=3600')
      .header('x-content-type-options', 'nosniff')
      .send(asset.body);
  });
}
