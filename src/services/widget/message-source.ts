import type { Db } from '../../db/database.js';
import {
  maxRowId,
  messagesAfter,
  messagesAfterRow,
  type MessageRow,
  type PolledMessage,
} from './tables/messages.js';
import { missingSessions } from './tables/sessions.js';

/**
 * What the streams read. The shared poller follows the messages' row ids, across every session; a
 * stream's own cursor is its session's message id.
 */
export class MessageSource {
  constructor(private readonly db: Db) {}

  /** The highest row id stored: where the shared poller starts. */
  maxRowId(): number {
    return maxRowId(this.db);
  }

  /**
   * In one read: up to `limit` messages of any session stored after row `afterRow`, in row order,
   * and which of `sessionIds` no longer exist (erased, by this process or another).
   */
  pollStreams(
    afterRow: number,
    sessionIds: readonly string[],
    limit: number,
  ): { messages: PolledMessage[]; gone: string[] } {
    return this.db
      .transaction(() => ({
        messages: messagesAfterRow(this.db, afterRow, limit),
        gone: missingSessions(this.db, sessionIds),
      }))
      .deferred();
  }

  /** Up to `limit` of the session's messages after its message id `after`, oldest first. */
  messagesAfter(sessionId: string, after: number, limit: number): MessageRow[] {
    return messagesAfter(this.db, sessionId, after, limit);
  }
}
