import { loadConfigFile } from '../rules/load.js';
import { openDatabase } from '../db/database.js';
import { buildState, closeState } from '../runtime/build-state.js';
import { describePeer } from '../identity/peer.js';
import { resolveIdentity } from '../identity/resolve.js';
import { canonicalTarget } from '../routing/request-target.js';
import { DatabaseTokenStore } from '../services/accounts/workspaces.js';
import { describeRequest } from './describe.js';
import { explainAnswer } from './explain-answer.js';
import { listSubject, withWorkspace } from '../limits/exemption.js';
import { UsageError } from './usage-error.js';
import { needsTier, requestTier } from '../http/request-tier.js';
import { OverrideTable, type OverrideAction } from '../limits/overrides.js';
import { banKeys } from '../limits/keys.js';
import type { RuleTable } from '../rules/compile.js';
import type { RequestIdentity } from '../identity/resolve.js';
import type { RequestTier } from '../http/request-tier.js';
import type { CompiledRoute } from '../rules/model.js';
import { storeReader, type StoreReader } from './explain-store.js';
import { readOverridesFile } from './overrides-file.js';

/** Where the overrides came from: the file's and the store's (the admin API's), or why the store was not read. */
interface OverrideSources {
  readonly file: ReadonlyMap<string, OverrideAction>;
  readonly api: ReadonlyMap<string, OverrideAction>;
  readonly storeError: string | undefined;
  /** Whether the store was asked (a Redis store). */
  readonly storeAsked: boolean;
}

/** The overrides file's entries and, with a store reader, the admin API's (a store error kept, not thrown). */
async function readOverrides(table: RuleTable, reader: StoreReader | undefined): Promise<OverrideSources> {
  const fileName = table.config.tiers.overrides.file;
  const file = fileName ? await readOverridesFile(fileName) : new Map<string, OverrideAction>();
  if (!reader) return { file, api: new Map(), storeError: undefined, storeAsked: false };
  try {
    return { file, api: await reader.overrides(), storeError: undefined, storeAsked: true };
  } catch (err) {
    return { file, api: new Map(), storeError: (err as Error).message, storeAsked: true };
  }
}

/** The lines on overrides: how many from each source, and where the one that chose the tier comes from. */
function overrideLines(table: RuleTable, sources: OverrideSources, tier: RequestTier | undefined): string[] {
  const lines: string[] = [];
  const { file, api, storeError } = sources;
  const fileName = table.config.tiers.overrides.file;
  // Only with a Redis store: the memory store's overrides live in the gateway's process.
  if (sources.storeAsked) {
    const parts = fileName ? [`${file.size} from file ${fileName}`] : [];
    parts.push(
      storeError === undefined ? `${api.size} from the admin API (store)` : `store not read: ${storeError}`,
    );
    lines.push(`overrides: ${parts.join(', ')}`);
  }
  const key = tier?.choice.override?.key;
  if (key !== undefined)
    lines.push(`override ${key}: from ${api.has(key) ? 'the admin API (store)' : `file ${fileName}`}`);
  return lines;
}

/**
 * The bans in force now for the request's keys, by limiter: each enforcing limiter with a ban whose
 * windows count the request (not at an unlimited tier). Empty without a store reader.
 */
async function bansInForce(
  reader: StoreReader | undefined,
  route: CompiledRoute,
  identity: RequestIdentity,
  keyPrefix: string,
  tier: RequestTier | undefined,
): Promise<{ bans: Map<string, number> | undefined; error?: string }> {
  const banning = route.limiters.filter(
    (l) => l.ban && !l.shadow && l.tagPart && (!tier || tier.windows.some((w) => w.limiter === l)),
  );
  if (!reader || banning.length === 0) return { bans: undefined };
  const keys = banning.map((l) => banKeys(keyPrefix, l.name, identity.hashed.get(l.tagPart!)!).key);
  try {
    const until = await reader.bansUntil(keys);
    const bans = new Map<string, number>();
    banning.forEach((l, i) => until[i] !== undefined && bans.set(l.name, until[i]!));
    return { bans };
  } catch (err) {
    return { bans: undefined, error: (err as Error).message };
  }
}

/** `tollgate explain METHOD URL`: the route, limiters and key parts one request would get. */
export async function explain(
  configFile: string,
  method: string,
  target: string,
  headerArgs: string[],
  peer: string,
): Promise<number> {
  const headers: Record<string, string> = {};
  for (const h of headerArgs) {
    const colon = h.indexOf(':');
    if (colon <= 0) throw new UsageError(`--header must be "Name: value", got "${h}"`);
    headers[h.slice(0, colon).trim().toLowerCase()] = h.slice(colon + 1).trim();
  }
  let path = target;
  const absolute = /^https?:\/\/([^/?#]*)(.*)$/.exec(target);
  if (absolute) {
    // Taken apart by hand: URL parsing would normalise the path the gateway must judge as sent.
    headers['host'] ??= absolute[1]!;
    path = absolute[2] || '/';
  }
  const canonical = canonicalTarget(path);
  const table = await loadConfigFile(configFile);
  // Explain reads the token database but never starts services or bootstraps accounts.
  const db =
    table.config.identity.workspaceTokens.source === 'database'
      ? openDatabase(table.config.services.dataDir)
      : undefined;
  // The overrides file's and, with a Redis store, the admin API's (which live in the store).
  const reader = storeReader(table.config.store);
  let sources: OverrideSources;
  try {
    sources = await readOverrides(table, reader);
  } catch (err) {
    await reader?.close();
    db?.close();
    throw err;
  }
  const overrides = OverrideTable.compile(new Map([...sources.file, ...sources.api]));
  const state = await buildState(table, {
    workspaceTokens: db && new DatabaseTokenStore(db, false),
    overrides: { current: () => overrides },
  });
  try {
    const route = table.router.matchPath(headers['host'], method.toUpperCase(), canonical.matchPath);
    const described = describePeer(peer, state.identity);
    const identity = route?.limiters.length
      ? await resolveIdentity(state.identity, route.parts, described, headers, true)
      : undefined;
    const subject =
      identity &&
      (await withWorkspace(state.identity, listSubject(state.identity, described, headers, identity)));
    const tier =
      route && identity && needsTier(state.tiers, route)
        ? await requestTier(state.tiers, state.identity, route, identity, headers)
        : undefined;
    const banRead =
      route && identity
        ? await bansInForce(reader, route, identity, state.keyPrefix, tier)
        : { bans: undefined };
    const answer =
      route &&
      explainAnswer({
        route,
        method: method.toUpperCase(),
        target: canonical,
        headers,
        identity,
        subject,
        windows: tier?.windows ?? route.windows,
        config: table.config,
        bans: banRead.bans,
      });
    const lines = describeRequest(
      table,
      route?.name,
      identity,
      state.keyPrefix,
      canonical,
      subject,
      tier,
      answer,
    ).split('\n');
    // After the tier line (or the client's): where the overrides, and the one that applied, came from.
    const at = lines.findIndex((l) => l.startsWith('tier: '));
    const extra = route && identity ? overrideLines(table, sources, tier) : [];
    if (banRead.error !== undefined) extra.push(`bans: store not read: ${banRead.error}`);
    const after = at >= 0 ? at + 1 : lines.findIndex((l) => l.startsWith('limiter '));
    lines.splice(after >= 0 ? after : lines.length, 0, ...extra);
    console.log(lines.join('\n'));
  } finally {
    await closeState(state);
    await reader?.close();
    db?.close();
  }
  return 0;
}
