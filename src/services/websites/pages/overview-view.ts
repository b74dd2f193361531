import type { DailyTotals, Dimension, EventValue, HourlyTotals, TopPage } from '../analytics/stats-source.js';
import { html, jsonData, type Html } from '../../pages/html.js';
import { changeDirection, changeText, rangeDays } from './periods.js';
import { valuesByName } from './display.js';
import { number, rangeQuery, statsPage, topTable, type StatsFrame } from './stats-view.js';

/**
 * The overview: the summary cards (each with its change against the previous period), the chart,
 * then the top lists; the daily and hourly figures behind toggles. A website that has never
 * recorded a pageview gets the tracking snippet and a wait for the first one instead. Pure.
 */

export interface OverviewTop {
  readonly dimension: Dimension;
  readonly title: string;
  readonly slug: string;
  readonly top: TopPage;
}

export interface OverviewData {
  readonly daily: readonly DailyTotals[];
  /** The same figures over the previous period of the same length. */
  readonly previous: readonly DailyTotals[];
  readonly hourly: readonly HourlyTotals[];
  readonly tops: readonly OverviewTop[];
  /** The events' value sums of the range, by name and unit. */
  readonly eventValues: readonly EventValue[];
}

const sum = (days: readonly DailyTotals[], key: 'visitors' | 'pageviews') =>
  days.reduce((n, d) => n + d[key], 0);

/** Pageviews per visitor, one decimal ("0" without visitors). */
const perVisitor = (pageviews: number, visitors: number) =>
  visitors === 0 ? 0 : Math.round((10 * pageviews) / visitors) / 10;

/** "previous 30 days", "the previous day": what a change is against. */
function previousLabel(days: number): string {
  return days === 1 ? 'the previous day' : `the previous ${days} days`;
}

function card(id: string, label: string, value: number, previous: number, against: string): Html {
  const shown = Number.isInteger(value) ? number(value) : value.toFixed(1);
  return html`<li>
    <span class="label">${label}</span>
    <strong id="total-${id}">${shown}</strong>
    <span id="change-${id}" class="change ${changeDirection(value, previous)}"
      >${changeText(value, previous)} <span class="muted">vs ${against}</span></span
    >
  </li>`;
}

function cards(data: OverviewData, days: number): Html {
  const visitors = sum(data.daily, 'visitors');
  const pageviews = sum(data.daily, 'pageviews');
  const before = { visitors: sum(data.previous, 'visitors'), pageviews: sum(data.previous, 'pageviews') };
  const against = previousLabel(days);
  return html`<section id="summary" aria-label="Summary">
    <ul class="cards">
      ${card('visitors', 'Visitors', visitors, before.visitors, against)}
      ${card('pageviews', 'Pageviews', pageviews, before.pageviews, against)}
      ${card(
        'per-visitor',
        'Pageviews per visitor',
        perVisitor(pageviews, visitors),
        perVisitor(before.pageviews, before.visitors),
        against,
      )}
    </ul>
  </section>`;
}

/** A table of figures behind a toggle. */
function figures(
  summary: string,
  caption: string,
  first: string,
  rows: readonly [string, number, number][],
  id: string,
): Html {
  return html`<details id="${id}">
    <summary>${summary}</summary>
    <table>
      <caption>
        ${caption}
      </caption>
      <thead>
        <tr>
          <th scope="col">${first}</th>
          <th scope="col" class="num">Visitors</th>
          <th scope="col" class="num">Pageviews</th>
        </tr>
      </thead>
      <tbody>
        ${rows.map(
          ([key, visitors, pageviews]) =>
            html`<tr>
              <th scope="row">${key}</th>
              <td class="num">${number(visitors)}</td>
              <td class="num">${number(pageviews)}</td>
            </tr>`,
        )}
      </tbody>
    </table>
  </details>`;
}

/** The chart's data block, its legend (the range's totals until a day is pointed at) and box. */
function chart(frame: StatsFrame, data: OverviewData): Html {
  const totals = { visitors: sum(data.daily, 'visitors'), pageviews: sum(data.daily, 'pageviews') };
  const label = `${frame.range.from} to ${frame.range.to}`;
  const block = {
    days: data.daily.map((d) => d.date),
    visitors: data.daily.map((d) => d.visitors),
    pageviews: data.daily.map((d) => d.pageviews),
    totals,
    label,
  };
  return html`<section id="trend" aria-labelledby="chart-title">
    <h2 id="chart-title">Visitors and pageviews</h2>
    <ul class="legend" id="chart-legend" aria-live="off">
      <li class="day"><span id="legend-day">${label}</span></li>
      <li class="visitors">
        <span class="swatch"></span>Visitors<strong id="legend-visitors">${number(totals.visitors)}</strong>
      </li>
      <li class="pageviews">
        <span class="swatch"></span>Pageviews<strong id="legend-pageviews"
          >${number(totals.pageviews)}</strong
        >
      </li>
    </ul>
    <div id="chart" class="chart" role="img" aria-labelledby="chart-title"></div>
    <script type="application/json" id="chart-data">
      ${jsonData(block)}
    </script>
    ${figures(
      'Days',
      'Visitors and pageviews per day (UTC)',
      'Day',
      data.daily.map((d) => [d.date, d.visitors, d.pageviews]),
      'days',
    )}
    ${figures(
      'Hours of the day',
      'Visitors and pageviews per UTC hour, summed over the range',
      'Hour (UTC)',
      data.hourly.map((h) => [`${String(h.hour).padStart(2, '0')}:00`, h.visitors, h.pageviews]),
      'hours',
    )}
  </section>`;
}

function topLists(frame: StatsFrame, data: OverviewData): Html {
  const q = rangeQuery(frame.range);
  const values = valuesByName(data.eventValues);
  return html`<section id="top-lists" aria-label="Top lists">
    <div class="grid">
      ${data.tops.map(
        (t) =>
          html`<section aria-labelledby="top-${t.slug}">
            <h2 id="top-${t.slug}">${t.title}</h2>
            ${topTable(t.dimension, `Top ${t.title.toLowerCase()}`, t.top, undefined, t.dimension === 'events' ? values : undefined)}
            <p><a href="/${frame.domain}/${t.slug}${q}">All ${t.title.toLowerCase()}</a></p>
          </section>`,
      )}
    </div>
  </section>`;
}

export function overviewPage(frame: StatsFrame, data: OverviewData): Html {
  return statsPage(
    frame,
    'Overview',
    html`${cards(data, rangeDays(frame.range))} ${chart(frame, data)} ${topLists(frame, data)}`,
    { chart: true },
  );
}

/**
 * A website that has never recorded a pageview: the snippet to paste, and a wait that turns live
 * when the first pageview arrives (live.js polls `pollPath`).
 */
export function waitingPage(frame: StatsFrame, scriptUrl: string, pollPath: string): Html {
  const snippet = `<script src="${scriptUrl}" defer></script>`;
  return statsPage(
    frame,
    'Overview',
    html`<section
      id="waiting"
      class="waiting"
      aria-labelledby="waiting-title"
      data-poll="${pollPath}"
      data-state="waiting"
    >
      <h2 id="waiting-title">Waiting for the first pageview</h2>
      <p>Paste this line into the <code>&lt;head&gt;</code> of every page of ${frame.domain}:</p>
      <pre><code id="snippet">${snippet}</code></pre>
      <p>
        Custom events: <code>pa.track('purchase', 3950, 'cents')</code> (a name, a whole-number value and its
        unit).
      </p>
      <p id="waiting-status" role="status" aria-live="polite">
        No pageview yet. This page checks every few seconds.
      </p>
    </section>`,
    { live: true },
  );
}
