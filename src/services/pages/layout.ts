import type { FastifyReply } from 'fastify';
import { ASSETS_PREFIX } from './assets.js';
import { html, type Html } from './html.js';

/** The pages' shell, their security headers, and the pages every host shares (404, sign-in, password). */

/**
 * Scripts, styles and fetches (the empty statistics page's poll) from this origin only; no inline
 * script, no framing, forms post here only.
 */
export const CONTENT_SECURITY_POLICY =
  "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; " +
  "form-action 'self'; frame-ancestors 'none'; base-uri 'none'";

export const LOGIN_PATH = '/_/login';
export const LOGOUT_PATH = '/_/logout';

export interface Shell {
  readonly title: string;
  /** The signed-in owner, if any: the header shows sign-out instead of sign-in. */
  readonly signedIn: boolean;
  /** Where "sign in" comes back to. */
  readonly here: string;
  readonly chart?: boolean;
  /** The empty statistics page's wait for the first pageview (live.js). */
  readonly live?: boolean;
  readonly body: Html;
}

export function page(shell: Shell): Html {
  const account = shell.signedIn
    ? html`<form method="post" action="${LOGOUT_PATH}">
        <button class="link" type="submit">Sign out</button>
      </form>`
    : html`<a href="${LOGIN_PATH}?next=${encodeURIComponent(shell.here)}">Sign in</a>`;
  return html`<!doctype html>
    <html lang="en">
      <head>
        <meta charset="utf-8" />
        <meta name="viewport" content="width=device-width, initial-scale=1" />
        <title>${shell.title} · tollgate</title>
        <link rel="icon" href="data:," />
        <link rel="stylesheet" href="${ASSETS_PREFIX}/pages.css" />
        ${shell.chart ? html`<link rel="stylesheet" href="${ASSETS_PREFIX}/uplot.min.css" />` : ''}
      </head>
      <body>
        <header><a class="brand" href="/">tollgate</a>${account}</header>
        <main id="main">${shell.body}</main>
        ${
          shell.chart
            ? html`<script src="${ASSETS_PREFIX}/uplot.min.js"></script>
                <script src="${ASSETS_PREFIX}/chart.js"></script>`
            : ''
        }
        ${shell.live ? html`<script src="${ASSETS_PREFIX}/live.js"></script>` : ''}
      </body>
    </html> `;
}

/** Sends a page with the pages' headers; nothing is cached, since what a page shows depends on its cookies. */
export function sendPage(reply: FastifyReply, status: number, body: Html): FastifyReply {
  return reply
    .status(status)
    .header('content-type', 'text/html; charset=utf-8')
    .header('content-security-policy', CONTENT_SECURITY_POLICY)
    .header('x-content-type-options', 'nosniff')
    .header('referrer-policy', 'same-origin')
    .header('cache-control', 'no-store')
    .send(body.text);
}

/** The one 404 page: a missing page and one the viewer may not see look the same. */
export function notFoundPage(signedIn: boolean, here: string): Html {
  return page({
    title: 'Not found',
    signedIn,
    here,
    body: html`<h1>Page not found</h1>
      <p>There is no page at this address, or it is not public.</p>`,
  });
}

export function loginPage(next: string, error?: string): Html {
  return page({
    title: 'Sign in',
    signedIn: false,
    here: next,
    body: html`<h1>Sign in</h1>
      <p>Sign in with your API key to see your private pages.</p>
      <form class="stack" method="post" action="${LOGIN_PATH}">
        ${error ? html`<p class="error" role="alert" id="login-error">${error}</p>` : ''}
        <input type="hidden" name="next" value="${next}" />
        <label
          >API key
          <input
            type="password"
            name="key"
            autocomplete="current-password"
            required${error ? html` aria-describedby="login-error"` : ''}
        /></label>
        <button type="submit">Sign in</button>
      </form>`,
  });
}

/** The form of a password page; `action` is its unlock path. */
export function passwordPage(
  title: string,
  action: string,
  signedIn: boolean,
  here: string,
  error?: string,
): Html {
  return page({
    title,
    signedIn,
    here,
    body: html`<h1>${title}</h1>
      <p>This page is protected by a password.</p>
      <form class="stack" method="post" action="${action}">
        ${error ? html`<p class="error" role="alert" id="password-error">${error}</p>` : ''}
        <label
          >Password
          <input
            type="password"
            name="password"
            autocomplete="current-password"
            required${error ? html` aria-describedby="password-error"` : ''}
        /></label>
        <button type="submit">Open</button>
      </form>`,
  });
}

/** How a website's privacy setting reads on the statistics and report pages. */
export const PRIVACY_LABELS: Record<number, string> = { 0: 'Public', 1: 'Private', 2: 'Password' };
