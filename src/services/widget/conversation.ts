import type { Db } from '../../db/database.js';
import { nowIso as now } from '../../db/timestamps.js';
import { deleteMessages, insertMessage, type MessageRow, type Sender } from './tables/messages.js';
import { markHumanRequested, nextMessageSeq, resetHumanRequest, findSession } from './tables/sessions.js';

/** What changes a conversation, each in one transaction over its session and its messages. */

/** The session was erased after the request was authenticated: nothing of it can be written. */
export class SessionGoneError extends Error {
  constructor() {
    super('the widget session no longer exists');
  }
}

function append(db: Db, sessionId: string, sender: Sender, body: string, at: string): MessageRow {
  const seq = nextMessageSeq(db, sessionId, at);
  if (seq === undefined) throw new SessionGoneError();
  return insertMessage(db, sessionId, seq, sender, body, at);
}

/** Stores a message with the session's next id. */
export function addMessage(db: Db, sessionId: string, sender: Sender, body: string): MessageRow {
  return db.transaction(() => append(db, sessionId, sender, body, now())).immediate();
}

/** Deletes the conversation's messages and its human request; returns how many messages went. Ids are never reused. */
export function clearConversation(db: Db, sessionId: string): number {
  return db
    .transaction(() => {
      resetHumanRequest(db, sessionId);
      return deleteMessages(db, sessionId);
    })
    .immediate();
}

/** Marks the conversation for a human; the notice is stored once, on the first request. */
export function requestHuman(
  db: Db,
  sessionId: string,
  notice: string,
): { requestedAt: string; message: MessageRow | null } {
  return db
    .transaction(() => {
      const at = now();
      if (!markHumanRequested(db, sessionId, at)) {
        return { requestedAt: findSession(db, sessionId)?.human_requested_at ?? at, message: null };
      }
      return { requestedAt: at, message: append(db, sessionId, 'system', notice, at) };
    })
    .immediate();
}
