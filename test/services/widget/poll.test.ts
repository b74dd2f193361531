// The original widget's poll: GET (and POST) /api/v1/widget/conversation/messages with `after`
// answers only the newer messages, oldest first, a page at a time; ids count per conversation.
import { describe, expect } from 'vitest';
import { shopTest as test, type Visitor, type WidgetMessage } from '../../helpers/widget-shop.js';

const page = (
  messages: WidgetMessage[],
  total: number,
  extra: { page?: number; per_page?: number } = {},
) => ({
  messages,
  page: extra.page ?? 1,
  per_page: extra.per_page ?? 50,
  total,
});

async function poll(visitor: Visitor, query: string): Promise<unknown> {
  const reply = await visitor.call('GET', `/conversation/messages?${query}`);
  expect(reply.status, reply.text).toBe(200);
  return reply.json();
}

describe('after', () => {
  test('53 messages: the poll answers the new ones only, oldest first, within the page bounds', async ({
    shop,
  }) => {
    const visitor = await shop.visitor();
    const sent: WidgetMessage[] = [];
    for (let i = 1; i <= 53; i++) sent.push(await visitor.say(`message ${i}`));
    // A conversation's own sequence: 1, 2, 3, ...
    expect(sent.map((m) => m.id)).toEqual(Array.from({ length: 53 }, (_, i) => i + 1));

    expect(await poll(visitor, 'after=0')).toEqual(page(sent.slice(0, 50), 53));
    expect(await poll(visitor, 'after=50')).toEqual(page(sent.slice(50), 3));
    expect(await poll(visitor, 'after=53')).toEqual(page([], 0));
    expect(await poll(visitor, 'after=1000')).toEqual(page([], 0));
    expect(await poll(visitor, 'after=10&per_page=2')).toEqual(page(sent.slice(10, 12), 43, { per_page: 2 }));
    expect(await poll(visitor, 'after=10&per_page=2&page=3')).toEqual(
      page(sent.slice(14, 16), 43, { page: 3, per_page: 2 }),
    );
    // Without after, the whole conversation as before.
    expect(await poll(visitor, 'page=2')).toEqual(page(sent.slice(50), 53, { page: 2 }));

    // The POST form reads the same fields from its body.
    const post = await visitor.call('POST', '/conversation/messages', { after: 51, per_page: 1 });
    expect(post.status).toBe(200);
    expect(post.json()).toEqual(page(sent.slice(51, 52), 2, { per_page: 1 }));
  });

  test('a client that appends what each poll answers shows every message once', async ({ shop }) => {
    const visitor = await shop.visitor();
    const shown: WidgetMessage[] = [];
    const pollOnce = async () => {
      const last = shown.at(-1)?.id ?? 0;
      shown.push(...((await poll(visitor, `after=${last}`)) as { messages: WidgetMessage[] }).messages);
    };
    await pollOnce();
    const first = await visitor.say('one');
    await pollOnce();
    await pollOnce();
    const second = await visitor.say('two');
    const third = await visitor.say('three');
    await pollOnce();
    await pollOnce();
    expect(shown).toEqual([first, second, third]);
  });

  test('ids are never reused after a clear, and each conversation counts its own', async ({ shop }) => {
    const visitor = await shop.visitor();
    await visitor.say('one');
    const two = await visitor.say('two');
    expect((await visitor.call('POST', '/conversation/clear')).json()).toEqual({ cleared: 2 });
    const three = await visitor.say('three');
    expect(three.id).toBe(3);
    expect(await poll(visitor, `after=${two.id}`)).toEqual(page([three], 1));

    const other = await shop.visitor('globex');
    expect((await other.say('hello')).id).toBe(1);
  });

  test('a bad after, page or per_page is a 422 naming the field', async ({ shop }) => {
    const visitor = await shop.visitor();
    for (const [query, fields] of [
      ['after=abc', { after: ['The after field must be a message id.'] }],
      ['after=-1', { after: ['The after field must be a message id.'] }],
      ['after=1&per_page=101', { per_page: ['The per_page field must be an integer between 1 and 100.'] }],
      ['after=1&page=0', { page: ['The page field must be a positive integer.'] }],
    ] as const) {
      const reply = await visitor.call('GET', `/conversation/messages?${query}`);
      expect(reply.status, query).toBe(422);
      expect(reply.json()).toEqual({
        error: { code: 'validation_failed', message: 'The given data was invalid.', fields },
      });
    }
  });
});
