import type { Migration } from './migration.js';

/**
 * Widget message ids per conversation (issue 20): a message's public id is `seq`, counted per
 * session in `widget_sessions.message_seq`, so an id no longer shows how many messages every
 * workspace stored. The row id stays the internal cursor of the shared stream poller.
 *
 * Stored data is kept, and so are the cursors clients hold: an existing message keeps its old id as
 * its seq, and an existing session counts on from the highest id ever given, so its next message
 * comes after any id a client saw. The owner's inbox reads `last_message_at` (newest activity
 * first) and `owner_read_seq` (unread: visitor messages after it; existing ones count as unread).
 * A lead records its session's workspace, so the owner's list reads one table by one index.
 */
export const widgetInbox: Migration = {
  version: 13,
  sql: `
    ALTER TABLE widget_sessions ADD COLUMN message_seq INTEGER NOT NULL DEFAULT 0;
    ALTER TABLE widget_sessions ADD COLUMN last_message_at TEXT;
    ALTER TABLE widget_sessions ADD COLUMN owner_read_seq INTEGER NOT NULL DEFAULT 0;
    ALTER TABLE widget_messages ADD COLUMN seq INTEGER NOT NULL DEFAULT 0;
    UPDATE widget_messages SET seq = id;
    UPDATE widget_sessions SET
      message_seq = coalesce((SELECT seq FROM sqlite_sequence WHERE name = 'widget_messages'), 0),
      last_message_at = (SELECT max(created_at) FROM widget_messages m WHERE m.session_id = widget_sessions.id);
    DROP INDEX widget_messages_session;
    CREATE UNIQUE INDEX widget_messages_seq ON widget_messages (session_id, seq);
    CREATE INDEX widget_sessions_activity ON widget_sessions (workspace_id, last_message_at);
    ALTER TABLE widget_leads ADD COLUMN workspace_id INTEGER REFERENCES workspaces(id) ON DELETE CASCADE;
    UPDATE widget_leads SET workspace_id = (SELECT workspace_id FROM widget_sessions s WHERE s.id = session_id);
    CREATE INDEX widget_leads_workspace ON widget_leads (workspace_id, id);
  `,
};
