import type { DayRange, Dimension, EventValue, TopPage } from '../analytics/stats-source.js';
import { html, type Html } from '../../pages/html.js';
import { page, PRIVACY_LABELS } from '../../pages/layout.js';
import { countryName, shareStep, valueText, valuesByName } from './display.js';
import { presets } from './periods.js';
import { SECTIONS, VALUE_HEADINGS, type Section } from './sections.js';

/** The statistics pages' HTML, from the data the routes read. Pure: unit-tested without a server. */

export const PAGE_SIZE = 100;
/** The longest search of a dimension table, as the stats API's. */
export const SEARCH_MAX = 255;

/** A count's share of the sum, as shown: one decimal, "0%" of nothing. */
export function share(count: number, sum: number): string {
  if (sum <= 0) return '0%';
  return `${(Math.round((1000 * count) / sum) / 10).toFixed(1)}%`;
}

export const number = (n: number): string => n.toLocaleString('en-US');

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
  /** Today (UTC), for the date presets; none: no presets. */
  readonly today?: string;
}

export const rangeQuery = (range: DayRange): string => `?from=${range.from}&to=${range.to}`;
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

/** The date presets as links of this page, the one showing now marked current. */
function presetLinks(frame: StatsFrame, action: string): Html | string {
  if (frame.today === undefined) return '';
  const search = frame.search ? `&search=${encodeURIComponent(frame.search)}` : '';
  return html`<nav class="presets" aria-label="Date presets">
    <ul>
      ${presets(frame.today).map((p) => {
        const current = p.range.from === frame.range.from && p.range.to === frame.range.to;
        return html`<li>
          <a href="${action}${rangeQuery(p.range)}${search}" ${current ? html` aria-current="true"` : ''}
            >${p.label}</a
          >
        </li>`;
      })}
    </ul>
  </nav>`;
}

function rangeForm(frame: StatsFrame): Html {
  const action = frame.section ? `/${frame.domain}/${frame.section.slug}` : `/${frame.domain}`;
  return html`${frame.rangeError ? html`<p class="error range-error" role="alert">${frame.rangeError}</p>` : ''}
    ${presetLinks(frame, action)}
    <form class="range" method="get" action="${action}" aria-label="Date range">
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

export function statsPage(
  frame: StatsFrame,
  title: string,
  body: Html,
  scripts: { chart?: boolean; live?: boolean } = {},
): Html {
  return page({
    title: `${title} · ${frame.domain}`,
    signedIn: frame.signedIn,
    here: frame.here,
    ...scripts,
    body: html`<h1>${frame.domain} <span class="muted">${title}</span></h1>
      ${sectionsNav(frame)} ${frame.section?.slug === 'realtime' ? '' : rangeForm(frame)} ${body}`,
  });
}

/** A value as its table shows it: a country by its name (its code as the title). */
function valueCell(dimension: Dimension, value: string): Html {
  if (dimension !== 'countries') return html`${value}`;
  const name = countryName(value);
  return name === value ? html`${value}` : html`<abbr title="${value}">${name}</abbr>`;
}

/** An event's value sums, per unit ("3,950 cents; 2 kg"); "" none. */
export function eventValuesText(values: readonly EventValue[]): string {
  return values.map((v) => valueText(v.total, v.unit)).join('; ');
}

/**
 * A table of a dimension's values: each row's value over a bar of its share (a class per whole
 * percent: the pages' CSP allows no inline style), its count and share; the events' with their
 * value sums.
 */
export function topTable(
  dimension: Dimension,
  caption: string,
  top: TopPage,
  captionId?: string,
  values?: ReadonlyMap<string, readonly EventValue[]>,
): Html {
  const valuesColumn = values !== undefined;
  const head = html`<thead>
    <tr>
      <th scope="col">${VALUE_HEADINGS[dimension]}</th>
      <th scope="col" class="num">Count</th>
      ${valuesColumn ? html`<th scope="col" class="num">Values</th>` : ''}
      <th scope="col" class="num">Share</th>
    </tr>
  </thead>`;
  const id = captionId ? html` id="${captionId}"` : '';
  if (top.rows.length === 0) {
    return html`<table${id} class="top"><caption>${caption}</caption>
${head}
<tbody><tr><td colspan="${valuesColumn ? 4 : 3}" class="muted">No data for this range.</td></tr></tbody></table>`;
  }
  return html`<table${id} class="top"><caption>${caption}</caption>
${head}
<tbody>
${top.rows.map(
  (r) =>
    html`<tr>
      <td class="value bar s${shareStep(r.count, top.sum)}">${valueCell(dimension, r.value)}</td>
      <td class="num">${number(r.count)}</td>
      ${valuesColumn ? html`<td class="num">${eventValuesText(values.get(r.value) ?? [])}</td>` : ''}
      <td class="num">${share(r.count, top.sum)}</td>
    </tr>`,
)}
</tbody></table>`;
}

export function dimensionPage(
  frame: StatsFrame,
  top: TopPage,
  pageNumber: number,
  search = '',
  values?: readonly EventValue[],
): Html {
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
      ${topTable(dimension, section.title, top, 'top', values && valuesByName(values))} ${pager}`,
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
