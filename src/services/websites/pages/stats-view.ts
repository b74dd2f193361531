import type {
  DailyTotals,
  DayRange,
  Dimension,
  HourlyTotals,
  RecentVisit,
  TopPage,
} from '../analytics/stats-source.js';
import { html, jsonData, type Html } from '../../pages/html.js';
import { page, PRIVACY_LABELS } from '../../pages/layout.js';
import { SECTIONS, VALUE_HEADINGS, type Section } from './sections.js';

/** The statistics pages' HTML, from the data the routes read. Pure: unit-tested without a server. */

export const PAGE_SIZE = 100;
/** The realtime table lists at most this many visits (the count is of all). */
export const REALTIME_ROWS = 100;
/** The longest search of a dimension table, as the stats API's. */
export const SEARCH_MAX = 255;

/** A count's share of the sum, as shown: one decimal, "0%" of nothing. */
export function share(count: number, sum: number): string {
  if (sum <= 0) return '0%';
  return `${(Math.round((1000 * count) / sum) / 10).toFixed(1)}%`;
}

const number = (n: number) => n.toLocaleString('en-US');

export interface StatsFrame {
  readonly domain: string;
  readonly signedIn: boolean;
  /** The path and query of this page. */
  readonly here: string;
  readonly range: DayRange;
  /** The range's error (shown beside the default range), if the query's range was refused. */
  readonly rangeError?: string;
  /** The current section; undefined: the overview. */
  readonly section?: Section;
  /** A dimension page's search ('' none): kept when the range changes. */
  readonly search?: string;
}

const rangeQuery = (range: DayRange) => `?from=${range.from}&to=${range.to}`;
/** The range's query, and the search's if there is one. */
const tableQuery = (range: DayRange, search = '') =>
  search === '' ? rangeQuery(range) : `${rangeQuery(range)}&search=${encodeURIComponent(search)}`;

function sectionsNav(frame: StatsFrame): Html {
  const base = `/${frame.domain}`;
  const q = rangeQuery(frame.range);
  const item = (href: string, title: string, current: boolean) =>
    html`<li><a href="${href}${q}" ${current ? html` aria-current="page"` : ''}>${title}</a></li>`;
  return html`<nav class="sections" aria-label="Statistics">
    <ul>
      ${item(base, 'Overview', frame.section === undefined)}
      ${SECTIONS.map((s) => item(`${base}/${s.slug}`, s.title, frame.section?.slug === s.slug))}
    </ul>
  </nav>`;
}

function rangeForm(frame: StatsFrame): Html {
  const action = frame.section ? `/${frame.domain}/${frame.section.slug}` : `/${frame.domain}`;
  return html`<form class="range" method="get" action="${action}" aria-label="Date range">
    ${frame.rangeError ? html`<p class="error" role="alert">${frame.rangeError}</p>` : ''}
    <label>From <input type="date" name="from" value="${frame.range.from}" required /></label>
    <label>To <input type="date" name="to" value="${frame.range.to}" required /></label>
    ${frame.search ? html`<input type="hidden" name="search" value="${frame.search}" />` : ''}
    <button type="submit">Show</button>
  </form>`;
}

/** A dimension page's search: a GET form that keeps the range; the server filters the table. */
function searchForm(frame: StatsFrame, base: string, search: string): Html {
  const title = frame.section!.title.toLowerCase();
  return html`<form class="range" method="get" action="${base}" role="search" aria-label="Search ${title}">
    <input type="hidden" name="from" value="${frame.range.from}" />
    <input type="hidden" name="to" value="${frame.range.to}" />
    <label
      >Search ${title}
      <input type="search" name="search" value="${search}" maxlength="${SEARCH_MAX}" />
    </label>
    <button type="submit">Search</button>
    ${search ? html`<a href="${base}${rangeQuery(frame.range)}">Clear search</a>` : ''}
  </form>`;
}

function statsPage(frame: StatsFrame, title: string, body: Html, chart = false): Html {
  return page({
    title: `${title} · ${frame.domain}`,
    signedIn: frame.signedIn,
    here: frame.here,
    chart,
    body: html`<h1>${frame.domain} <span class="muted">${title}</span></h1>
      ${sectionsNav(frame)} ${frame.section?.slug === 'realtime' ? '' : rangeForm(frame)} ${body}`,
  });
}

export function topTable(dimension: Dimension, caption: string, top: TopPage, captionId?: string): Html {
  if (top.rows.length === 0) {
    return html`<table${captionId ? html` id="${captionId}"` : ''}><caption>${caption}</caption>
<thead><tr><th scope="col">${VALUE_HEADINGS[dimension]}</th><th scope="col" class="num">Count</th><th scope="col" class="num">Share</th></tr></thead>
<tbody><tr><td colspan="3" class="muted">No data for this range.</td></tr></tbody></table>`;
  }
  return html`<table${captionId ? html` id="${captionId}"` : ''}><caption>${caption}</caption>
<thead><tr><th scope="col">${VALUE_HEADINGS[dimension]}</th><th scope="col" class="num">Count</th><th scope="col" class="num">Share</th></tr></thead>
<tbody>
${top.rows.map(
  (r) =>
    html`<tr>
      <td class="value">${r.value}</td>
      <td class="num">${number(r.count)}</td>
      <td class="num">${share(r.count, top.sum)}</td>
    </tr>`,
)}
</tbody></table>`;
}

function totals(daily: readonly DailyTotals[]): Html {
  const visitors = daily.reduce((n, d) => n + d.visitors, 0);
  const pageviews = daily.reduce((n, d) => n + d.pageviews, 0);
  return html`<ul class="totals" aria-label="Totals">
    <li>Visitors <strong id="total-visitors">${number(visitors)}</strong></li>
    <li>Pageviews <strong id="total-pageviews">${number(pageviews)}</strong></li>
  </ul>`;
}

/** The chart's data block and its box, with a table of the same figures for readers without script. */
function chart(daily: readonly DailyTotals[]): Html {
  const data = {
    days: daily.map((d) => d.date),
    visitors: daily.map((d) => d.visitors),
    pageviews: daily.map((d) => d.pageviews),
  };
  return html`<h2 id="chart-title">Visitors and pageviews</h2>
    <div id="chart" class="chart" role="img" aria-labelledby="chart-title"></div>
    <script type="application/json" id="chart-data">
      ${jsonData(data)}
    </script>
    <details>
      <summary>Daily figures</summary>
      <table>
        <caption>
          Visitors and pageviews per day
        </caption>
        <thead>
          <tr>
            <th scope="col">Day</th>
            <th scope="col" class="num">Visitors</th>
            <th scope="col" class="num">Pageviews</th>
          </tr>
        </thead>
        <tbody>
          ${daily.map(
            (d) =>
              html`<tr>
                <td>${d.date}</td>
                <td class="num">${number(d.visitors)}</td>
                <td class="num">${number(d.pageviews)}</td>
              </tr>`,
          )}
        </tbody>
      </table>
    </details>`;
}

/** Visitors and pageviews by UTC hour of the day, summed over the range. */
function hoursTable(hourly: readonly HourlyTotals[]): Html {
  return html`<h2 id="hours-title">By hour of the day</h2>
    <table id="hours">
      <caption>
        Visitors and pageviews per UTC hour, summed over the range
      </caption>
      <thead>
        <tr>
          <th scope="col">Hour (UTC)</th>
          <th scope="col" class="num">Visitors</th>
          <th scope="col" class="num">Pageviews</th>
        </tr>
      </thead>
      <tbody>
        ${hourly.map(
          (h) =>
            html`<tr>
              <th scope="row">${String(h.hour).padStart(2, '0')}:00</th>
              <td class="num">${number(h.visitors)}</td>
              <td class="num">${number(h.pageviews)}</td>
            </tr>`,
        )}
      </tbody>
    </table>`;
}

export function overviewPage(
  frame: StatsFrame,
  daily: readonly DailyTotals[],
  hourly: readonly HourlyTotals[],
  tops: readonly { dimension: Dimension; title: string; slug: string; top: TopPage }[],
): Html {
  const q = rangeQuery(frame.range);
  return statsPage(
    frame,
    'Overview',
    html`${totals(daily)} ${chart(daily)} ${hoursTable(hourly)}
      <div class="grid">
        ${tops.map(
          (t) =>
            html`<section aria-labelledby="top-${t.slug}">
              <h2 id="top-${t.slug}">${t.title}</h2>
              ${topTable(t.dimension, `Top ${t.title.toLowerCase()}`, t.top)}
              <p><a href="/${frame.domain}/${t.slug}${q}">All ${t.title.toLowerCase()}</a></p>
            </section>`,
        )}
      </div>`,
    true,
  );
}

export function dimensionPage(frame: StatsFrame, top: TopPage, pageNumber: number, search = ''): Html {
  const section = frame.section!;
  const dimension = section.dimension!;
  const base = `/${frame.domain}/${section.slug}`;
  const q = tableQuery(frame.range, search);
  const last = Math.max(1, Math.ceil(top.total / PAGE_SIZE));
  const pager =
    last > 1
      ? html`<nav aria-label="Pages of the table">
          <p>
            ${pageNumber > 1 ? html`<a href="${base}${q}&page=${pageNumber - 1}" rel="prev">Previous</a>` : ''}
            Page ${pageNumber} of ${last}
            ${pageNumber < last ? html`<a href="${base}${q}&page=${pageNumber + 1}" rel="next">Next</a>` : ''}
          </p>
        </nav>`
      : '';
  return statsPage(
    frame,
    section.title,
    html`${searchForm(frame, base, search)}
      <p>
        ${number(top.total)} values${search ? html` matching <q id="search-term">${search}</q>` : ''},
        ${number(top.sum)} in all.
        <a href="${base}.csv${q}" download>Download CSV</a>
      </p>
      ${topTable(dimension, section.title, top, 'top')} ${pager}`,
  );
}

export function realtimePage(frame: StatsFrame, visits: readonly RecentVisit[], minutes: number): Html {
  const cell = (label: string, v: string | null) =>
    v === null
      ? html`<td data-label="${label}" class="muted">–</td>`
      : html`<td data-label="${label}" class="value">${v}</td>`;
  const shown = visits.slice(0, REALTIME_ROWS);
  return statsPage(
    frame,
    'Realtime',
    html`<p>
        <strong id="recent-count">${number(visits.length)}</strong> visits in the last ${minutes} minutes (UTC
        times)${visits.length > shown.length ? html`; the latest ${shown.length} are listed` : ''}.
      </p>
      <table id="recent" class="stacked">
        <caption>
          Recent visits
        </caption>
        <thead>
          <tr>
            <th scope="col">Time</th>
            <th scope="col">Page</th>
            <th scope="col">Referrer</th>
            <th scope="col">Country</th>
            <th scope="col">Browser</th>
            <th scope="col">Operating system</th>
            <th scope="col">Device</th>
          </tr>
        </thead>
        <tbody>
          ${
            visits.length === 0
              ? html`<tr>
                  <td colspan="7" class="muted">No visits yet.</td>
                </tr>`
              : ''
          }
          ${shown.map(
            (v) =>
              html`<tr>
                <th scope="row">${v.at.replace('T', ' ').slice(0, 19)}</th>
                ${cell('Page', v.page)}${cell('Referrer', v.referrer)}${cell('Country', v.country)}${cell('Browser', v.browser)}${cell('Operating system', v.operatingSystem)}${cell('Device', v.device)}
              </tr>`,
          )}
        </tbody>
      </table>`,
  );
}

export function websitesListPage(rows: readonly { url: string; privacy: number }[], here: string): Html {
  return page({
    title: 'Your websites',
    signedIn: true,
    here,
    body: html`<h1>Your websites</h1>
      <table>
        <caption>
          Statistics pages
        </caption>
        <thead>
          <tr>
            <th scope="col">Website</th>
            <th scope="col">Page</th>
          </tr>
        </thead>
        <tbody>
          ${
            rows.length === 0
              ? html`<tr>
                  <td colspan="2" class="muted">No websites yet: add one with POST /api/v1/websites.</td>
                </tr>`
              : ''
          }
          ${rows.map(
            (r) =>
              html`<tr>
                <td class="value"><a href="/${r.url}">${r.url}</a></td>
                <td>${PRIVACY_LABELS[r.privacy] ?? ''}</td>
              </tr>`,
          )}
        </tbody>
      </table>`,
  });
}
