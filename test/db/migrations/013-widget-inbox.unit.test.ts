// Migration 13 (message ids per conversation, the inbox's columns) keeps every stored row and
// every cursor a client holds: old ids stay, and each session counts on past the highest id given.
import Database from 'better-sqlite3';
import { expect, test } from 'vitest';
import { migrate, type Db } from '../../../src/db/database.js';
import { MIGRATIONS } from '../../../src/db/migrations/index.js';
import { addMessage } from '../../../src/services/widget/conversation.js';
import { messagesAfter } from '../../../src/services/widget/tables/messages.js';
import { leadPage } from '../../../src/services/widget/tables/leads.js';
import { conversationPage, insertSession } from '../../../src/services/widget/tables/sessions.js';

const at = (s: number) => `2026-01-01T00:00:${String(s).padStart(2, '0')}.000Z`;

function databaseBeforeInbox(): Db {
  const db = new Database(':memory:');
  db.pragma('foreign_keys = ON');
  migrate(
    db,
    MIGRATIONS.filter((m) => m.version < 13),
  );
  db.prepare("INSERT INTO workspaces (id, name, created_at) VALUES (1, 'acme', ?), (2, 'globex', ?)").run(
    at(0),
    at(0),
  );
  const session = db.prepare(
    'INSERT INTO widget_sessions (id, workspace_id, created_at, last_seen_at) VALUES (?, ?, ?, ?)',
  );
  session.run('a', 1, at(1), at(1));
  session.run('b', 2, at(2), at(2));
  session.run('quiet', 1, at(3), at(3));
  const message = db.prepare(
    "INSERT INTO widget_messages (session_id, sender, body, created_at) VALUES (?, 'visitor', ?, ?)",
  );
  message.run('a', 'a1', at(4)); // id 1
  message.run('b', 'b1', at(5)); // id 2
  message.run('a', 'a2', at(6)); // id 3
  message.run('b', 'b2', at(7)); // id 4, then cleared: the highest id ever given stays 4
  db.prepare('DELETE FROM widget_messages WHERE id = 4').run();
  db.prepare(
    `INSERT INTO widget_leads (session_id, name, email, consent_at, created_at)
     VALUES ('b', 'Bo', 'bo@example.com', ?, ?)`,
  ).run(at(8), at(8));
  return db;
}

test('stored messages keep their ids; each session counts on past the highest id given', () => {
  const db = databaseBeforeInbox();
  migrate(db, MIGRATIONS);
  expect(db.pragma('user_version', { simple: true })).toBe(MIGRATIONS.at(-1)!.version);

  expect(messagesAfter(db, 'a', 0, 10)).toEqual([
    { id: 1, sender: 'visitor', body: 'a1', created_at: at(4) },
    { id: 3, sender: 'visitor', body: 'a2', created_at: at(6) },
  ]);
  expect(messagesAfter(db, 'b', 0, 10)).toEqual([
    { id: 2, sender: 'visitor', body: 'b1', created_at: at(5) },
  ]);
  // A client holding id 4 (b's cleared message) still sees b's next message: 5.
  expect(addMessage(db, 'b', 'agent', 'hello again').id).toBe(5);
  expect(addMessage(db, 'a', 'agent', 'hi').id).toBe(5);
  expect(addMessage(db, 'quiet', 'visitor', 'first').id).toBe(5);
  // A session made after the migration counts from 1.
  insertSession(db, 'new', 1, { websiteId: null, pageUrl: null, locale: null }, at(9));
  expect(addMessage(db, 'new', 'visitor', 'first').id).toBe(1);

  // The inbox's columns: the last activity from the stored messages, the lead's workspace.
  expect(
    db
      .prepare(
        'SELECT id, last_message_at IS NOT NULL AS active, owner_read_seq FROM widget_sessions ORDER BY id',
      )
      .all(),
  ).toEqual([
    { id: 'a', active: 1, owner_read_seq: 0 },
    { id: 'b', active: 1, owner_read_seq: 0 },
    { id: 'new', active: 1, owner_read_seq: 0 },
    { id: 'quiet', active: 1, owner_read_seq: 0 },
  ]);
  expect(leadPage(db, 2, 10, 0).rows.map((l) => [l.name, l.conversation_id])).toEqual([['Bo', 'b']]);
  expect(leadPage(db, 1, 10, 0).total).toBe(0);
  expect(conversationPage(db, 1, 10, 0).total).toBe(3);
  db.close();
});

test('a session without a message before the migration has no last activity, yet counts on past the highest id', () => {
  const db = databaseBeforeInbox();
  migrate(db, MIGRATIONS);
  const quiet = db
    .prepare("SELECT message_seq, last_message_at FROM widget_sessions WHERE id = 'quiet'")
    .get();
  expect(quiet).toEqual({ message_seq: 4, last_message_at: null });
  db.close();
});
