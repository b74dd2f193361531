import type { Page } from 'playwright-core';

/** Chromium's console words for a Content Security Policy refusal (a script, style or request blocked). */
const CSP_REFUSAL = /Content Security Policy|Refused to/i;

export interface PageProblemOptions {
  /** Every console error too, not only the CSP's (a page that must log nothing at error level). */
  readonly consoleErrors?: boolean;
}

/**
 * The problems a page in headless Chromium shows from now on, collected as they come: its
 * uncaught script errors and its CSP refusals (which Chromium reports on the console, not as
 * page errors). Call before `page.goto`; a test ends with `expect(problems).toEqual([])`.
 */
export function pageProblems(page: Page, options: PageProblemOptions = {}): string[] {
  const problems: string[] = [];
  page.on('pageerror', (err) => problems.push(err.message));
  page.on('console', (message) => {
    const text = message.text();
    if (CSP_REFUSAL.test(text) || (options.consoleErrors && message.type() === 'error')) problems.push(text);
  });
  return problems;
}
