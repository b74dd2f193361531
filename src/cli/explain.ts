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
import { readFile } from 'node:fs/promises';
import { needsTier, requestTier } from '../http/request-tier.js';
import { OverrideTable } from '../limits/overrides.js';
import { parseOverridesFile } from '../runtime/overrides.js';

async function fileOverrides(file: string): Promise<OverrideTable> {
  if (!file) return OverrideTable.EMPTY;
  const { entries, errors } = parseOverridesFile(await readFile(file, 'utf8'));
  if (errors.length > 0) throw new UsageError(`${file}: ${errors.join('; ')}`);
  return OverrideTable.compile(entries);
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
  // The overrides file's overrides (not the admin API's, which live in the store).
  const overrides = await fileOverrides(table.config.tiers.overrides.file);
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
      });
    console.log(
      describeRequest(table, route?.name, identity, state.keyPrefix, canonical, subject, tier, answer),
    );
  } finally {
    await closeState(state);
    db?.close();
  }
  return 0;
}
