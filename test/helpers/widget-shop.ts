import { request } from 'undici';
import { expect } from 'vitest';
import { openDatabase } from '../../src/db/database.js';
import { userForKey } from '../../src/services/accounts/accounts.js';
import { createWorkspaceToken } from '../../src/services/accounts/workspaces.js';
import { ALICE_KEY, BOB_KEY, embeddedEnv, NO_ADDRESS_BUDGETS, newDataDir } from './embedded.js';
import { DEFAULT_CONFIG } from './default-config.js';
import { test } from './fixtures.js';
import { send, type Reply } from './gateway.js';

/** A widget message as the endpoints answer it. */
export interface WidgetMessage {
  id: number;
  sender: 'visitor' | 'agent' | 'system';
  body: string;
  created_at: string;
}

/**
 * `test` with `shop`: the shipped config's gateway with its embedded services, counting in the
 * file's Redis, and two workspaces: "acme" of Alice (ALICE_KEY) and "globex" of Bob (BOB_KEY).
 */
export const shopTest = test.extend('shop', { scope: 'file' }, async ({ redis, gateways }, { onCleanup }) => {
  const dataDir = newDataDir();
  const gateway = await gateways.start(
    DEFAULT_CONFIG,
    embeddedEnv(dataDir, { REDIS_URL: redis.url, TRUSTED_PROXIES: '127.0.0.1', ...NO_ADDRESS_BUDGETS }),
  );
  const db = openDatabase(dataDir);
  onCleanup(() => {
    db.close();
  });
  createWorkspaceToken(db, 'acme', userForKey(db, ALICE_KEY)!);
  createWorkspaceToken(db, 'globex', userForKey(db, BOB_KEY)!);
  return new Shop(gateway.url(), dataDir);
});

/** The shop's visitors and owners, through the gateway. */
export class Shop {
  constructor(
    readonly url: string,
    readonly dataDir: string,
  ) {}

  async call(
    method: string,
    path: string,
    headers: Record<string, string> = {},
    body?: unknown,
  ): Promise<Reply> {
    return send(`${this.url}${path}`, {
      method,
      headers: { ...(body === undefined ? {} : { 'content-type': 'application/json' }), ...headers },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
  }

  /** A workspace of the key's user, made as `tollgate tokens create --workspace NAME --user ID` does. */
  workspace(name: string, key: string): string {
    const db = openDatabase(this.dataDir);
    try {
      createWorkspaceToken(db, name, userForKey(db, key)!);
    } finally {
      db.close();
    }
    return name;
  }

  /** A new visitor session of the workspace: its token. */
  async visitor(workspace = 'acme', pageUrl = 'https://shop.test/pricing'): Promise<Visitor> {
    const reply = await this.call('POST', '/api/v1/widget/init', {}, { workspace, page_url: pageUrl });
    expect(reply.status, reply.text).toBe(200);
    const { token, session_id } = reply.json() as { token: string; session_id: string };
    return new Visitor(this, token, session_id);
  }

  /** An owner's call of the inbox API with an API key. */
  owner(key: string, method: string, path: string, body?: unknown): Promise<Reply> {
    return this.call(method, `/api/v1/widget/inbox${path}`, { authorization: `Bearer ${key}` }, body);
  }
}

export class Visitor {
  constructor(
    private readonly shop: Shop,
    readonly token: string,
    readonly sessionId: string,
  ) {}

  call(method: string, path: string, body?: unknown): Promise<Reply> {
    return this.shop.call(method, `/api/v1/widget${path}`, { authorization: `Bearer ${this.token}` }, body);
  }

  async say(body: string): Promise<WidgetMessage> {
    const reply = await this.call('POST', '/messages', { body });
    expect(reply.status, reply.text).toBe(201);
    return (reply.json() as { message: WidgetMessage }).message;
  }

  /** Opens the visitor's event stream; `next()` reads the next message event. */
  async stream(after?: number): Promise<{ next(): Promise<WidgetMessage>; close(): void }> {
    const res = await request(`${this.shop.url}/api/v1/widget/messages/stream`, {
      method: 'POST',
      headers: { authorization: `Bearer ${this.token}`, 'content-type': 'application/json' },
      body: JSON.stringify(after === undefined ? {} : { after }),
    });
    expect(res.statusCode).toBe(200);
    const chunks = (res.body as AsyncIterable<Buffer>)[Symbol.asyncIterator]();
    let buffer = '';
    return {
      async next() {
        for (;;) {
          const end = buffer.indexOf('\n\n');
          if (end >= 0) {
            const event = buffer.slice(0, end);
            buffer = buffer.slice(end + 2);
            const data = /^data: (.*)$/m.exec(event);
            if (/^event: message$/m.test(event) && data) return JSON.parse(data[1]!) as WidgetMessage;
            continue;
          }
          const chunk = await chunks.next();
          if (chunk.done) throw new Error('the stream ended');
          buffer += chunk.value.toString('utf8');
        }
      },
      close: () => res.body.destroy(),
    };
  }
}
