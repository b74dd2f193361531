import type { ValueCount } from '../stats-source.js';
import type { ReportPeriod } from './period.js';

/** The figures of one website's report over one period. */
export interface ReportFigures {
  readonly website: string;
  readonly period: ReportPeriod;
  readonly visitors: number;
  readonly pageviews: number;
  readonly pages: readonly ValueCount[];
  readonly referrers: readonly ValueCount[];
}

export interface ReportMessage {
  readonly subject: string;
  readonly text: string;
}

const range = (p: ReportPeriod) => (p.from === p.to ? p.from : `${p.from} to ${p.to}`);

function table(title: string, rows: readonly ValueCount[]): string {
  if (rows.length === 0) return `${title}: none\n`;
  return `${title}:\n${rows.map((r) => `  ${r.count}  ${r.value}`).join('\n')}\n`;
}

/** The report as plain text (no tracking pixel, no remote content): pure. */
export function composeReport(figures: ReportFigures): ReportMessage {
  return {
    subject: `${figures.website}: ${figures.visitors} visitors, ${figures.pageviews} pageviews (${range(figures.period)})`,
    text:
      `Statistics of ${figures.website}, ${range(figures.period)} (UTC)\n\n` +
      `Visitors: ${figures.visitors}\nPageviews: ${figures.pageviews}\n\n` +
      table('Top pages', figures.pages) +
      '\n' +
      table('Top referrers', figures.referrers),
  };
}
