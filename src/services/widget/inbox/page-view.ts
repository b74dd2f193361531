import type { Workspace } from '../../accounts/workspaces.js';
import { html, type Html } from '../../pages/html.js';
import { page } from '../../pages/layout.js';
import type { WidgetEvent, Conversation, Page } from './inbox.js';
import type { MessageRow } from '../tables/messages.js';
import type { OwnerLeadRow } from '../tables/leads.js';
import type { SatisfactionRow } from '../tables/ratings.js';

/** The inbox pages' HTML: pure functions of what the inbox read. Every value is escaped (html``). */

export const INBOX_PATH = '/_/inbox';

export const workspacePath = (workspace: string) => `${INBOX_PATH}/${encodeURIComponent(workspace)}`;
export const conversationPath = (workspace: string, id: string) =>
  `${workspacePath(workspace)}/${encodeURIComponent(id)}`;

/** "2026-11-25 23:59" (UTC): the minute is enough in a list. */
const when = (iso: string | null) => (iso === null ? '' : `${iso.slice(0, 10)} ${iso.slice(11, 16)}`);

export function workspacesPage(workspaces: readonly Workspace[]): Html {
  return page({
    title: 'Inbox',
    signedIn: true,
    here: INBOX_PATH,
    body: html`<h1>Inbox</h1>
      ${
        workspaces.length === 0
          ? html`<p>
              You have no workspace yet: <code>tollgate tokens create --workspace NAME</code> makes one.
            </p>`
          : html`<ul id="workspaces">
              ${workspaces.map((w) => html`<li><a href="${workspacePath(w.name)}">${w.name}</a></li>`)}
            </ul>`
      }`,
  });
}

function pager(base: string, list: Page<unknown>, param: string): Html {
  const last = Math.max(1, Math.ceil(list.total / list.per_page));
  if (last === 1) return html``;
  const link = (n: number, label: string) => html`<a href="${base}?${param}=${n}">${label}</a>`;
  return html`<p class="pager">
    ${list.page > 1 ? link(list.page - 1, 'Newer') : ''} Page ${list.page} of ${last}
    ${list.page < last ? link(list.page + 1, 'Older') : ''}
  </p>`;
}

export function conversationsPage(
  workspace: string,
  conversations: Page<Conversation>,
  leads: Page<OwnerLeadRow>,
): Html {
  const base = workspacePath(workspace);
  return page({
    title: `Inbox · ${workspace}`,
    signedIn: true,
    here: base,
    body: html`<p><a href="${INBOX_PATH}">Inbox</a></p>
      <h1>${workspace}</h1>
      <table id="conversations" class="stacked">
        <caption>
          Conversations (${conversations.total})
        </caption>
        <thead>
          <tr>
            <th>Last activity</th>
            <th>Page</th>
            <th>Last message</th>
            <th class="num">Unread</th>
            <th class="num">Rating</th>
          </tr>
        </thead>
        <tbody>
          ${conversations.items.map(
            (c) =>
              html`<tr data-conversation="${c.id}">
                <td data-label="Last activity">
                  <a href="${conversationPath(workspace, c.id)}">${when(c.last_message_at)}</a>
                </td>
                <td data-label="Page" class="value">${c.page_url ?? ''}</td>
                <td data-label="Last message" class="value">
                  ${c.last_message ? html`${c.last_message.sender}: ${c.last_message.body}` : ''}
                </td>
                <td data-label="Unread" class="num unread">${c.unread}</td>
                <td data-label="Rating" class="num">${c.rating ?? ''}</td>
              </tr>`,
          )}
        </tbody>
      </table>
      ${conversations.items.length === 0 ? html`<p class="muted">No conversation yet.</p>` : ''}
      ${pager(base, conversations, 'page')}
      <h2>Leads (${leads.total})</h2>
      <p><a href="${base}/leads.csv" download>Download the leads (CSV)</a></p>
      ${leadsTable(workspace, leads.items)} ${pager(base, leads, 'leads_page')}`,
  });
}

function leadsTable(workspace: string, leads: readonly OwnerLeadRow[]): Html {
  if (leads.length === 0) return html`<p class="muted">No lead yet.</p>`;
  return html`<table id="leads" class="stacked">
    <thead>
      <tr>
        <th>Received</th>
        <th>Name</th>
        <th>E-mail</th>
        <th>Message</th>
        <th>Conversation</th>
      </tr>
    </thead>
    <tbody>
      ${leads.map(
        (l) =>
          html`<tr>
            <td data-label="Received">${when(l.created_at)}</td>
            <td data-label="Name" class="value">${l.name}</td>
            <td data-label="E-mail" class="value">${l.email}</td>
            <td data-label="Message" class="value">${l.message ?? ''}</td>
            <td data-label="Conversation">
              <a href="${conversationPath(workspace, l.conversation_id)}">Open</a>
            </td>
          </tr>`,
      )}
    </tbody>
  </table>`;
}

export interface ConversationView {
  readonly workspace: string;
  readonly conversation: Conversation;
  readonly satisfaction: SatisfactionRow | null;
  readonly leads: readonly OwnerLeadRow[];
  readonly messages: Page<MessageRow>;
  readonly events: Page<WidgetEvent>;
  readonly error?: string;
}

export function conversationPage(view: ConversationView): Html {
  const { workspace, conversation: c, satisfaction, messages, events } = view;
  const here = conversationPath(workspace, c.id);
  return page({
    title: `Conversation · ${workspace}`,
    signedIn: true,
    here,
    body: html`<p><a href="${workspacePath(workspace)}">${workspace}</a></p>
      <h1>Conversation</h1>
      <dl class="totals">
        <div>
          <dt>Started</dt>
          <dd>${when(c.started_at)}</dd>
        </div>
        <div>
          <dt>Messages</dt>
          <dd>${c.messages}</dd>
        </div>
        <div>
          <dt>Rating</dt>
          <dd id="rating">${satisfaction ? `${satisfaction.rating}/5` : '–'}</dd>
        </div>
      </dl>
      ${c.page_url ? html`<p>Page: <span class="value">${c.page_url}</span></p>` : ''}
      ${c.human_requested_at ? html`<p><strong>The visitor asked for a human</strong> at ${when(c.human_requested_at)}.</p>` : ''}
      ${satisfaction?.comment ? html`<p>Comment: <q>${satisfaction.comment}</q></p>` : ''}
      ${messages.total > messages.items.length ? html`<p class="muted">The last ${messages.items.length} of ${messages.total} messages.</p>` : ''}
      <ol id="messages" class="messages">
        ${messages.items.map(
          (m) =>
            html`<li class="message from-${m.sender}" data-id="${m.id}">
              <strong>${m.sender}</strong> <span class="muted">${when(m.created_at)}</span>
              <p class="value">${m.body}</p>
            </li>`,
        )}
      </ol>
      <form id="reply" class="stack" method="post" action="${here}/reply">
        ${view.error ? html`<p class="error" role="alert" id="reply-error">${view.error}</p>` : ''}
        <label
          >Reply
          <textarea
            name="body"
            rows="4"
            required${view.error ? html` aria-describedby="reply-error"` : ''}
          ></textarea>
        </label>
        <button type="submit">Send reply</button>
      </form>
      ${
        view.leads.length > 0
          ? html`<h2>Leads</h2>
              ${leadsTable(workspace, view.leads)}`
          : ''
      }
      <h2>Events (${events.total})</h2>
      ${
        events.items.length === 0
          ? html`<p class="muted">No event.</p>`
          : html`<table id="events" class="stacked">
              <thead>
                <tr>
                  <th>Occurred</th>
                  <th>Type</th>
                  <th>Data</th>
                </tr>
              </thead>
              <tbody>
                ${events.items.map(
                  (e) =>
                    html`<tr>
                      <td data-label="Occurred">${when(e.occurred_at)}</td>
                      <td data-label="Type">${e.type}</td>
                      <td data-label="Data" class="value">
                        ${e.data === null ? '' : JSON.stringify(e.data)}
                      </td>
                    </tr>`,
                )}
              </tbody>
            </table>`
      }`,
  });
}
