import fc from 'fast-check';
import { expect } from 'vitest';
import type { Gateway } from '../../../src/runtime/gateway.js';
import { ALICE_KEY, BOB_KEY } from '../../helpers/embedded.js';
import { embeddedTest } from '../../helpers/fixtures.js';
import { pageOf } from '../../helpers/list-pages.js';
import { send } from '../../helpers/gateway.js';

/**
 * The list's search, sort and pagination agree with a reference model (filter, sort, slice) over
 * random sets of websites, created and queried through the gateway over HTTP.
 */

interface Site {
  id: number;
  url: string;
}

interface Query {
  search?: string;
  sort?: string;
  per_page?: number;
  page?: number;
}

interface ListBody {
  data: Site[];
  meta: {
    current_page: number;
    from: number | null;
    last_page: number;
    per_page: number;
    to: number | null;
    total: number;
  };
}

const test = embeddedTest();

const auth = (key: string) => ({ authorization: `Bearer ${key}`, accept: 'application/json' });

async function createSite(gateway: Gateway, written: string, key: string): Promise<Site> {
  const reply = await send(`${gateway.url()}/api/v1/websites`, {
    method: 'POST',
    headers: { ...auth(key), 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams({ url: written }).toString(),
  });
  expect(reply.status, reply.text).toBe(201);
  const { id, url } = (reply.json() as { data: Site }).data;
  return { id, url };
}

async function deleteSite(gateway: Gateway, site: Site, key: string): Promise<void> {
  const reply = await send(`${gateway.url()}/websites/${site.id}/destroy`, {
    method: 'DELETE',
    headers: auth(key),
  });
  expect(reply.status).toBe(200);
}

async function list(gateway: Gateway, query: Query): Promise<ListBody> {
  const params = new URLSearchParams();
  for (const [name, value] of Object.entries(query)) if (value !== undefined) params.set(name, String(value));
  const reply = await send(`${gateway.url()}/api/v1/websites?${params.toString()}`, {
    headers: auth(ALICE_KEY),
  });
  expect(reply.status, reply.text).toBe(200);
  return reply.json() as ListBody;
}

/** The reference: the owner's sites whose host contains the search (any case), sorted by host then id, one page of them (pageOf). */
function model(sites: readonly Site[], query: Query): ListBody {
  const search = (query.search ?? '').toLowerCase();
  const direction = query.sort === 'desc' ? -1 : 1; // another sort reads as asc
  // A per_page outside 10–100 reads as 10, as the original's controller does.
  const perPage =
    query.per_page !== undefined && query.per_page >= 10 && query.per_page <= 100 ? query.per_page : 10;
  const matching = sites
    .filter((s) => s.url.includes(search))
    .sort((a, b) => (a.url === b.url ? a.id - b.id : a.url < b.url ? -direction : direction));
  const { rows, meta } = pageOf(matching, perPage, query.page ?? 1);
  return { data: rows, meta };
}

/** Hosts from a small alphabet, so that searches often match several and sorting meets shared prefixes. */
const canonicalHost = fc.stringMatching(/^[ab1][ab1-]{0,4}[ab1]\.(ab|com|b1)$/);

/** How a client may write the host: the service stores the canonical form whatever the spelling. */
const written = (host: string) =>
  fc.constantFrom(host, `https://www.${host}/`, `HTTP://${host.toUpperCase()}:8080/path?q=1`, `www.${host}`);

const dataSet = fc
  .uniqueArray(canonicalHost, { maxLength: 24 })
  .chain((hosts) => fc.tuple(...hosts.map(written)).map((spellings) => ({ hosts, spellings })));

const query: fc.Arbitrary<Query> = fc.record(
  {
    search: fc.stringMatching(/^[aAbB1.-]{0,3}$/),
    sort: fc.constantFrom('asc', 'desc', 'foo'),
    per_page: fc.oneof(fc.integer({ min: 10, max: 13 }), fc.constantFrom(100, 5, 9, 101)),
    page: fc.integer({ min: 1, max: 4 }),
  },
  { requiredKeys: [] },
);

test('search, sort, per_page and page agree with the reference model', async ({ gateway }) => {
  // Bob's websites share the hosts' alphabet: none may show up in Alice's lists.
  const bobs = [await createSite(gateway, 'ab.ab', BOB_KEY), await createSite(gateway, 'b-a.com', BOB_KEY)];
  await fc.assert(
    fc.asyncProperty(
      dataSet,
      fc.array(query, { minLength: 1, maxLength: 8 }),
      async ({ hosts, spellings }, queries) => {
        const sites: Site[] = [];
        try {
          for (const spelling of spellings) sites.push(await createSite(gateway, spelling, ALICE_KEY));
          expect(sites.map((s) => s.url)).toEqual(hosts);
          for (const q of queries) {
            const body = await list(gateway, q);
            const expected = model(sites, q);
            expect(body.meta).toEqual({ ...expected.meta, path: expect.any(String) });
            expect(body.data.map(({ id, url }) => ({ id, url }))).toEqual(expected.data);
          }
        } finally {
          for (const site of sites) await deleteSite(gateway, site, ALICE_KEY);
        }
      },
    ),
    { numRuns: 15 },
  );
  for (const site of bobs) await deleteSite(gateway, site, BOB_KEY);
});
