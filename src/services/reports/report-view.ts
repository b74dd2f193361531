import type { CheckResult } from './checks/types.js';
import { CHECK_TEXTS, issueTexts, orderedChecks, valueText } from './explain.js';
import type { ReportRow } from './store.js';
import { html, type Html } from '../pages/html.js';
import { page, PRIVACY_LABELS } from '../pages/layout.js';

/** The report pages' HTML. Pure. Every value of a check comes from the analysed page: escaped. */

const RESULT_LABELS = { good: 'Good', decent: 'Decent', bad: 'Bad' } as const;

/** What the check means; when it failed, its findings and what to do. */
function aboutCell(name: string, c: CheckResult): Html {
  const text = CHECK_TEXTS[name];
  const findings = issueTexts(name, c);
  return html`<td data-label="About" class="about">
    ${text ? html`<p>${text.means}</p>` : ''} ${findings.map((f) => html`<p class="finding value">${f}</p>`)}
    ${!c.passed && text ? html`<p class="todo"><strong>What to do:</strong> ${text.todo}</p>` : ''}
  </td>`;
}

export function reportPage(row: ReportRow, signedIn: boolean, here: string): Html {
  const results = JSON.parse(row.results) as Record<string, CheckResult>;
  const checks = orderedChecks(results);
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
          Checks, failed first
        </caption>
        <thead>
          <tr>
            <th scope="col">Check</th>
            <th scope="col">Importance</th>
            <th scope="col">Verdict</th>
            <th scope="col">Value</th>
            <th scope="col">What it means</th>
          </tr>
        </thead>
        <tbody>
          ${checks.map(
            ([name, c]) =>
              html`<tr data-check="${name}" class="${c.passed ? 'passed' : 'failed'}">
                <th scope="row">${CHECK_TEXTS[name]?.title ?? name}</th>
                <td data-label="Importance">${c.importance}</td>
                <td data-label="Verdict" class="verdict ${c.passed ? 'result-good' : 'result-bad'}">
                  ${c.passed ? 'Passed' : 'Failed'}
                </td>
                <td data-label="Value" class="value">${valueText(name, c)}</td>
                ${aboutCell(name, c)}
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
