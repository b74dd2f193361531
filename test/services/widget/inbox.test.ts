// The owner's inbox API, through the real gateway: the workspace owner's API key reads the
// conversations (newest activity first, unread counts), messages, events, rating and leads, and
// replies as an agent to the visitor's stream and poll; DELETE /me erases what the inbox shows.
import { describe, expect } from 'vitest';
import { ALICE_KEY, BOB_KEY } from '../../helpers/embedded.js';
import { shopTest as test, type Shop, type WidgetMessage } from '../../helpers/widget-shop.js';

const TIMESTAMP = expect.stringMatching(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
const NOT_FOUND = { error: { code: 'not_found', message: 'Resource not found.' } };

async function owner(shop: Shop, path: string, method = 'GET', body?: unknown): Promise<unknown> {
  const reply = await shop.owner(ALICE_KEY, method, path, body);
  expect(reply.status, `${method} ${path}: ${reply.text}`).toBe(method === 'POST' ? 201 : 200);
  return reply.json();
}

describe('the inbox API', () => {
  test('only the workspace owner, with their API key', async ({ shop }) => {
    for (const headers of [{}, { authorization: 'Bearer tg_not_a_key' }] as Record<string, string>[]) {
      const reply = await shop.call('GET', '/api/v1/widget/inbox/acme/conversations', headers);
      expect(reply.status).toBe(401);
      expect(reply.json()).toEqual({ error: { code: 'unauthenticated', message: 'Unauthenticated.' } });
    }
    // Another owner's workspace and a missing one answer alike.
    for (const [key, path] of [
      [BOB_KEY, '/acme/conversations'],
      [BOB_KEY, '/acme/leads.csv'],
      [ALICE_KEY, '/globex/leads'],
      [ALICE_KEY, '/nowhere/conversations'],
      [ALICE_KEY, '/acme/conversations/not-a-session'],
      [ALICE_KEY, '/acme/conversations/not-a-session/messages'],
    ] as const) {
      const reply = await shop.owner(key, 'GET', path);
      expect(reply.status, path).toBe(404);
      expect(reply.json()).toEqual(NOT_FOUND);
    }
    // Bob cannot write into Alice's conversations either.
    const visitor = await shop.visitor();
    await visitor.say('hi');
    const reply = await shop.owner(BOB_KEY, 'POST', `/acme/conversations/${visitor.sessionId}/messages`, {
      body: 'not mine',
    });
    expect(reply.status).toBe(404);
    expect(reply.json()).toEqual(NOT_FOUND);
    const bad = await shop.owner(ALICE_KEY, 'GET', '/acme/conversations?per_page=0');
    expect(bad.status).toBe(422);
    expect(bad.json()).toEqual({
      error: {
        code: 'validation_failed',
        message: 'The given data was invalid.',
        fields: { per_page: ['The per_page field must be an integer between 1 and 100.'] },
      },
    });
  });

  test('conversations newest activity first with unread counts; reading marks them read; the reply reaches the stream and the poll', async ({
    shop,
  }) => {
    // A workspace of its own: the other tests' conversations stay out of its list.
    const ws = shop.workspace('initech', ALICE_KEY);
    const ann = await shop.visitor(ws, 'https://shop.test/pricing');
    const ben = await shop.visitor(ws, 'https://shop.test/cart');
    await shop.visitor(ws); // no message: not a conversation
    const hi = await ann.say('hi');
    const anyone = await ann.say('anyone there?');
    const price = await ben.say('what does it cost?');

    const listed = (await owner(shop, '/initech/conversations')) as { conversations: { id: string }[] };
    const summary = (
      id: string,
      page_url: string,
      messages: number,
      unread: number,
      last: WidgetMessage,
    ) => ({
      id,
      website_id: null,
      page_url,
      locale: null,
      started_at: TIMESTAMP,
      last_message_at: last.created_at,
      human_requested_at: null,
      messages,
      unread,
      last_message: { sender: last.sender, body: last.body },
      rating: null,
    });
    expect(listed).toEqual({
      conversations: [
        summary(ben.sessionId, 'https://shop.test/cart', 1, 1, price),
        summary(ann.sessionId, 'https://shop.test/pricing', 2, 2, anyone),
      ],
      page: 1,
      per_page: 50,
      total: 2,
    });
    expect(await owner(shop, '/initech/conversations?per_page=1&page=2')).toEqual({
      conversations: [summary(ann.sessionId, 'https://shop.test/pricing', 2, 2, anyone)],
      page: 2,
      per_page: 1,
      total: 2,
    });

    // Reading a page marks what it answered read: here the first message only.
    const base = `/initech/conversations/${ann.sessionId}`;
    expect(await owner(shop, `${base}/messages?per_page=1`)).toEqual({
      messages: [hi],
      page: 1,
      per_page: 1,
      total: 2,
    });
    const unread = async () =>
      (
        (await owner(shop, '/initech/conversations')) as { conversations: { id: string; unread: number }[] }
      ).conversations.map((c) => [c.id, c.unread]);
    expect(await unread()).toEqual([
      [ben.sessionId, 1],
      [ann.sessionId, 1],
    ]);
    expect(await owner(shop, `${base}/messages?after=1`)).toEqual({
      messages: [anyone],
      page: 1,
      per_page: 50,
      total: 1,
    });
    expect(await unread()).toEqual([
      [ben.sessionId, 1],
      [ann.sessionId, 0],
    ]);

    // The reply: an agent message with the conversation's next id, delivered to the open stream.
    const stream = await ann.stream();
    try {
      const answer = (await owner(shop, `${base}/messages`, 'POST', { body: '  Hello, I am Sam.  ' })) as {
        message: WidgetMessage;
      };
      expect(answer).toEqual({
        message: { id: 3, sender: 'agent', body: 'Hello, I am Sam.', created_at: TIMESTAMP },
      });
      expect(await stream.next()).toEqual(answer.message);
      const poll = await ann.call('GET', `/conversation/messages?after=${anyone.id}`);
      expect(poll.json()).toEqual({ messages: [answer.message], page: 1, per_page: 50, total: 1 });
      // Newest activity first: Ann's conversation moves up.
      expect(await unread()).toEqual([
        [ann.sessionId, 0],
        [ben.sessionId, 1],
      ]);
    } finally {
      stream.close();
    }
    const empty = await shop.owner(
      ALICE_KEY,
      'POST',
      `${'/initech/conversations/'}${ann.sessionId}/messages`,
      {
        body: '   ',
      },
    );
    expect(empty.status).toBe(422);
    expect(empty.json()).toEqual({
      error: {
        code: 'validation_failed',
        message: 'The given data was invalid.',
        fields: { body: ['The body field is required.'] },
      },
    });
  });

  test('a conversation with its rating, leads and events', async ({ shop }) => {
    const visitor = await shop.visitor();
    await visitor.say('I want a quote');
    expect((await visitor.call('POST', '/request-human')).status).toBe(200);
    expect((await visitor.call('POST', '/satisfaction', { rating: 4, comment: 'quick' })).status).toBe(200);
    const lead = await visitor.call('POST', '/leads', {
      name: 'Ann',
      email: 'ann@example.com',
      message: 'call me',
      consent: true,
    });
    expect(lead.status).toBe(201);
    const events = await visitor.call('POST', '/events', {
      events: [
        { type: 'open', occurred_at: '2026-11-01T10:00:00Z' },
        { type: 'page_view', occurred_at: '2026-11-01T10:00:05Z', data: { path: '/pricing' } },
      ],
    });
    expect(events.status).toBe(202);

    const base = `/acme/conversations/${visitor.sessionId}`;
    const leadId = (lead.json() as { lead: { id: number } }).lead.id;
    expect(await owner(shop, base)).toEqual({
      conversation: {
        id: visitor.sessionId,
        website_id: null,
        page_url: 'https://shop.test/pricing',
        locale: null,
        started_at: TIMESTAMP,
        last_message_at: TIMESTAMP,
        human_requested_at: TIMESTAMP,
        messages: 2,
        unread: 1,
        last_message: { sender: 'system', body: 'A team member will join shortly.' },
        rating: 4,
      },
      satisfaction: { rating: 4, comment: 'quick', updated_at: TIMESTAMP },
      leads: [
        {
          id: leadId,
          conversation_id: visitor.sessionId,
          name: 'Ann',
          email: 'ann@example.com',
          message: 'call me',
          page_url: 'https://shop.test/pricing',
          consent_at: TIMESTAMP,
          created_at: TIMESTAMP,
        },
      ],
    });
    expect(await owner(shop, `${base}/events`)).toEqual({
      events: [
        {
          id: expect.any(Number),
          type: 'open',
          occurred_at: '2026-11-01T10:00:00.000Z',
          data: null,
          received_at: TIMESTAMP,
        },
        {
          id: expect.any(Number),
          type: 'page_view',
          occurred_at: '2026-11-01T10:00:05.000Z',
          data: { path: '/pricing' },
          received_at: TIMESTAMP,
        },
      ],
      page: 1,
      per_page: 50,
      total: 2,
    });
  });
});

describe('leads', () => {
  test('listed newest first and exported as formula-safe CSV; erasure takes them with the conversation', async ({
    shop,
  }) => {
    const leave = async (name: string, email: string, message?: string) => {
      const visitor = await shop.visitor('globex', 'https://globex.test/');
      await visitor.say('hello');
      const reply = await visitor.call('POST', '/leads', { name, email, message, consent: 'yes' });
      expect(reply.status).toBe(201);
      return { visitor, lead: (reply.json() as { lead: { id: number; created_at: string } }).lead };
    };
    const first = await leave(
      '=HYPERLINK("http://evil.test","click")',
      'a@example.com',
      'line one\nline two',
    );
    const second = await leave('Bo, "the" Builder', 'b@example.com');

    const bob = async (path: string) => {
      const reply = await shop.owner(BOB_KEY, 'GET', path);
      expect(reply.status, reply.text).toBe(200);
      return reply;
    };
    const row = (l: typeof first, name: string, email: string, message: string | null) => ({
      id: l.lead.id,
      conversation_id: l.visitor.sessionId,
      name,
      email,
      message,
      page_url: 'https://globex.test/',
      consent_at: l.lead.created_at,
      created_at: l.lead.created_at,
    });
    expect((await bob('/globex/leads')).json()).toEqual({
      leads: [
        row(second, 'Bo, "the" Builder', 'b@example.com', null),
        row(first, '=HYPERLINK("http://evil.test","click")', 'a@example.com', 'line one\nline two'),
      ],
      page: 1,
      per_page: 50,
      total: 2,
    });

    const csv = await bob('/globex/leads.csv');
    expect(csv.headers['content-type']).toBe('text/csv; charset=utf-8');
    expect(csv.headers['content-disposition']).toBe('attachment; filename="leads.csv"');
    expect(csv.text).toBe(
      'id,created_at,name,email,message,page_url,consent_at,conversation_id\r\n' +
        `${second.lead.id},${second.lead.created_at},"Bo, ""the"" Builder",b@example.com,,https://globex.test/,${second.lead.created_at},${second.visitor.sessionId}\r\n` +
        `${first.lead.id},${first.lead.created_at},"'=HYPERLINK(""http://evil.test"",""click"")",a@example.com,"line one\nline two",https://globex.test/,${first.lead.created_at},${first.visitor.sessionId}\r\n`,
    );

    // DELETE /me: the visitor's lead, messages and conversation leave the inbox.
    expect((await first.visitor.call('DELETE', '/me')).json()).toEqual({ erased: true });
    expect(((await bob('/globex/leads')).json() as { leads: unknown[] }).leads).toEqual([
      row(second, 'Bo, "the" Builder', 'b@example.com', null),
    ]);
    expect((await bob('/globex/leads.csv')).text).not.toContain(first.visitor.sessionId);
    const conversations = (await bob('/globex/conversations')).json() as { conversations: { id: string }[] };
    expect(conversations.conversations.map((c) => c.id)).not.toContain(first.visitor.sessionId);
    const gone = await shop.owner(
      BOB_KEY,
      'GET',
      `/globex/conversations/${first.visitor.sessionId}/messages`,
    );
    expect(gone.status).toBe(404);
    expect(gone.json()).toEqual(NOT_FOUND);
  });
});
