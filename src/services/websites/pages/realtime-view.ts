import type { RecentVisit } from '../analytics/stats-source.js';
import { html, type Html } from '../../pages/html.js';
import { countryName } from './display.js';
import { number, statsPage, type StatsFrame } from './stats-view.js';

/** The realtime page: the last minutes' visitors and pageviews counted apart, and each pageview. Pure. */

/** The realtime table lists at most this many pageviews (the counts are of all). */
export const REALTIME_ROWS = 100;

export interface RealtimeCounts {
  /** New visitors' first pageviews. */
  readonly visitors: number;
  readonly pageviews: number;
  readonly minutes: number;
}

export function realtimeCounts(visits: readonly RecentVisit[], minutes: number): RealtimeCounts {
  return { visitors: visits.filter((v) => v.visitor).length, pageviews: visits.length, minutes };
}

const plural = (n: number, one: string, many: string) => `${number(n)} ${n === 1 ? one : many}`;

export function realtimePage(frame: StatsFrame, visits: readonly RecentVisit[], minutes: number): Html {
  // URLs may break anywhere; short values (a country, a browser) never mid-word.
  const cell = (label: string, v: string | null, kind: 'value' | 'short') =>
    v === null
      ? html`<td data-label="${label}" class="muted ${kind}">–</td>`
      : html`<td data-label="${label}" class="${kind}">${v}</td>`;
  const shown = visits.slice(0, REALTIME_ROWS);
  const counts = realtimeCounts(visits, minutes);
  return statsPage(
    frame,
    'Realtime',
    html`<ul class="cards" aria-label="Last ${minutes} minutes">
        <li>
          <span class="label">Visitors</span><strong id="recent-visitors">${number(counts.visitors)}</strong>
        </li>
        <li>
          <span class="label">Pageviews</span
          ><strong id="recent-pageviews">${number(counts.pageviews)}</strong>
        </li>
      </ul>
      <p id="recent-summary">
        ${plural(counts.visitors, 'visitor', 'visitors')} and
        ${plural(counts.pageviews, 'pageview', 'pageviews')} in the last ${minutes} minutes (UTC
        times)${visits.length > shown.length ? html`; the latest ${shown.length} pageviews are listed` : ''}.
      </p>
      <table id="recent" class="stacked">
        <caption>
          Recent pageviews
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
                  <td colspan="7" class="muted">No pageviews yet.</td>
                </tr>`
              : ''
          }
          ${shown.map(
            (v) =>
              html`<tr${v.visitor ? html` class="new-visitor"` : ''}>
                <th scope="row" class="short">${v.at.replace('T', ' ').slice(0, 19)}</th>
                ${cell('Page', v.page, 'value')}${cell('Referrer', v.referrer, 'value')}${cell(
                  'Country',
                  v.country === null ? null : countryName(v.country),
                  'short',
                )}${cell('Browser', v.browser, 'short')}${cell('Operating system', v.operatingSystem, 'short')}${cell(
                  'Device',
                  v.device,
                  'short',
                )}
              </tr>`,
          )}
        </tbody>
      </table>`,
  );
}
