import type { Migration } from './migration.js';

/**
 * The visitor widget: one session per visitor token, its conversation, widget events, leads and
 * the satisfaction rating. Everything hangs off the session, so erasing a visitor is one DELETE.
 * Message ids use AUTOINCREMENT: never reused after a clear, so a stream's Last-Event-ID stays a valid cursor.
 */
export const widget: Migration = {
  version: 5,
  sql: `
    CREATE TABLE widget_sessions (
      id TEXT PRIMARY KEY,
      workspace_id INTEGER NOT NULL REFERENCES workspaces(id) ON DELETE CASCADE,
      website_id INTEGER REFERENCES websites(id) ON DELETE SET NULL,
      page_url TEXT,
      locale TEXT,
      human_requested_at TEXT,
      typing_at TEXT,
      created_at TEXT NOT NULL,
      last_seen_at TEXT NOT NULL
    );
    CREATE TABLE widget_messages (
      id INTEGER PRIMARY KEY AUTOINCREMENT,
      session_id TEXT NOT NULL REFERENCES widget_sessions(id) ON DELETE CASCADE,
      sender TEXT NOT NULL CHECK (sender IN ('visitor', 'agent', 'system')),
      body TEXT NOT NULL,
      created_at TEXT NOT NULL
    );
    CREATE INDEX widget_messages_session ON widget_messages (session_id, id);
    CREATE TABLE widget_events (
      id INTEGER PRIMARY KEY,
      session_id TEXT NOT NULL REFERENCES widget_sessions(id) ON DELETE CASCADE,
      type TEXT NOT NULL,
      occurred_at TEXT NOT NULL,
      data TEXT,
      received_at TEXT NOT NULL
    );
    CREATE INDEX widget_events_session ON widget_events (session_id);
    CREATE TABLE widget_leads (
      id INTEGER PRIMARY KEY,
      session_id TEXT NOT NULL REFERENCES widget_sessions(id) ON DELETE CASCADE,
      name TEXT NOT NULL,
      email TEXT NOT NULL,
      message TEXT,
      consent_at TEXT NOT NULL,
      page_url TEXT,
      created_at TEXT NOT NULL
    );
    CREATE INDEX widget_leads_session ON widget_leads (session_id);
    CREATE TABLE widget_satisfaction (
      session_id TEXT PRIMARY KEY REFERENCES widget_sessions(id) ON DELETE CASCADE,
      rating INTEGER NOT NULL CHECK (rating BETWEEN 1 AND 5),
      comment TEXT,
      created_at TEXT NOT NULL,
      updated_at TEXT NOT NULL
    );
  `,
};
