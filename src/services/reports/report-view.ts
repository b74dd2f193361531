import type { CheckResult, Json } from './checks/types.js';
import type { ReportRow } from './store.js';
import { html, type Html } from '../pages/html.js';
import { page, PRIVACY_LABELS } from '../pages/layout.js';

/** The report pages' HTML. Pure. Every value of a check comes from the analysed page: escaped. */

const CHECK_TITLES: Record<string, string> = {
  title: 'Title',
  meta_description: 'Meta description',
  headings: 'Headings',
  https_encryption: 'HTTPS encryption',
  meta_viewport: 'Meta viewport',
  charset: 'Charset',
  language: 'Language',
  favicon: 'Favicon',
  noindex: 'Noindex',
  in_page_links: 'In-page links',
  image_keywords: 'Image keywords',
  text_compression: 'Text compression',
  load_time: 'Load time',
  page_size: 'Page size',
  dom_size: 'DOM size',
  deprecated_html_tags: 'Deprecated HTML tags',
  structured_data: 'Structured data',
};

const RESULT_LABELS = { good: 'Good', decent: 'Decent', bad: 'Bad' } as const;

/** A check's value as text: strings as they are, anything else as JSON, cut at 1000 characters. */
export function valueText(value: Json | undefined): string {
  if (value === null || value === undefined) return '–';
  const text = typeof value === 'string' ? value : JSON.stringify(value);
  return text.length > 1000 ? `${text.slice(0, 1000)}…` : text;
}

/** The failed check's issues; empty (and hidden on a phone) when it passed. */
function issuesCell(c: CheckResult): Html {
  const issues = Object.entries(c.errors ?? {}).map(
    ([k, v]) => html`<div>${k}${v === null ? '' : html`: ${valueText(v)}`}</div>`,
  );
  return html`<td data-label="Issues" class="value">${issues}</td>`;
}

export function reportPage(row: ReportRow, signedIn: boolean, here: string): Html {
  const results = JSON.parse(row.results) as Record<string, CheckResult>;
  const checks = Object.entries(results);
  const passed = checks.filter(([, c]) => c.passed).length;
  return page({
    title: `Report ${row.id}: ${row.url}`,
    signedIn,
    here,
    body: html`<h1>Report: <span class="value">${row.url}</span></h1>
      <dl class="totals">
        <div>
          <dt>Result</dt>
          <dd class="verdict result-${row.result}" id="result">${RESULT_LABELS[row.result]}</dd>
        </div>
        <div>
          <dt>Score</dt>
          <dd class="verdict" id="score">${row.score}</dd>
        </div>
        <div>
          <dt>Checks passed</dt>
          <dd class="verdict">${passed} of ${checks.length}</dd>
        </div>
      </dl>
      <p>
        Page: <a href="${row.page_url}" rel="nofollow noopener noreferrer">${row.page_url}</a>. Generated
        ${row.generated_at.replace('T', ' ').slice(0, 19)} UTC; project ${row.project}.
      </p>
      <table id="checks" class="stacked">
        <caption>
          Checks
        </caption>
        <thead>
          <tr>
            <th scope="col">Check</th>
            <th scope="col">Importance</th>
            <th scope="col">Verdict</th>
            <th scope="col">Value</th>
            <th scope="col">Issues</th>
          </tr>
        </thead>
        <tbody>
          ${checks.map(
            ([name, c]) =>
              html`<tr data-check="${name}">
                <th scope="row">${CHECK_TITLES[name] ?? name}</th>
                <td data-label="Importance">${c.importance}</td>
                <td data-label="Verdict" class="verdict ${c.passed ? 'result-good' : 'result-bad'}">
                  ${c.passed ? 'Passed' : 'Failed'}
                </td>
                <td data-label="Value" class="value">${valueText(c.value)}</td>
                ${issuesCell(c)}
              </tr>`,
          )}
        </tbody>
      </table>`,
  });
}

export function reportListPage(rows: readonly ReportRow[], here: string): Html {
  return page({
    title: 'Your reports',
    signedIn: true,
    here,
    body: html`<h1>Your reports</h1>
      <table id="reports">
        <caption>
          Reports and who can see their pages
        </caption>
        <thead>
          <tr>
            <th scope="col">Page</th>
            <th scope="col">Result</th>
            <th scope="col" class="num">Score</th>
            <th scope="col">Visibility</th>
            <th scope="col">Generated</th>
          </tr>
        </thead>
        <tbody>
          ${
            rows.length === 0
              ? html`<tr>
                  <td colspan="5" class="muted">No reports yet: create one with POST /api/v1/reports.</td>
                </tr>`
              : ''
          }
          ${rows.map(
            (r) =>
              html`<tr>
                <td class="value"><a href="/${r.id}">${r.url}</a></td>
                <td class="result-${r.result}">${RESULT_LABELS[r.result]}</td>
                <td class="num">${r.score}</td>
                <td>${PRIVACY_LABELS[r.privacy] ?? ''}</td>
                <td>${r.generated_at.slice(0, 10)}</td>
              </tr>`,
          )}
        </tbody>
      </table>`,
  });
}
