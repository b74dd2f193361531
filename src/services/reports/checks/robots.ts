import { check, clip, SHOWN, type CheckResult } from './types.js';

/**
 * The robots check, as the originals have it: fails when the site's robots.txt does not let
 * crawlers fetch the page; `errors.failed` lists the Disallow rules that match it. Read as RFC 9309
 * says: the group of our product token, else the `*` group; the longest matching rule wins, Allow
 * on a tie; `*` matches any run of characters and a final `$` the end of the path.
 */

/** The product token crawlers are grouped by (of the analyser's User-Agent). */
export const ROBOTS_AGENT = 'tollgate-analyzer';

interface Rule {
  readonly allow: boolean;
  readonly pattern: string;
}

/** The rules of the group that applies to `agent` (its own, else `*`); several groups of one name merge. */
export function rulesFor(text: string, agent: string): Rule[] {
  const own: Rule[] = [];
  const any: Rule[] = [];
  let agents: string[] = [];
  let inRules = false;
  let matched = false;
  for (const raw of text.split(/\r\n|\r|\n/)) {
    const line = raw.replace(/#.*/, '').trim();
    const colon = line.indexOf(':');
    if (colon < 0) continue;
    const key = line.slice(0, colon).trim().toLowerCase();
    const value = line.slice(colon + 1).trim();
    if (key === 'user-agent') {
      // A user-agent line after rules starts a new group.
      if (inRules) agents = [];
      inRules = false;
      agents.push(value.toLowerCase());
      continue;
    }
    if (key !== 'allow' && key !== 'disallow') continue;
    inRules = true;
    // An empty Disallow allows everything: no rule.
    if (!value) continue;
    const rule = { allow: key === 'allow', pattern: value };
    if (agents.includes(agent)) {
      matched = true;
      own.push(rule);
    }
    if (agents.includes('*')) any.push(rule);
  }
  return matched ? own : any;
}

/**
 * Whether a rule's pattern matches the path (with its query) from its start. A glob match with one
 * backtrack point (the last `*`): O(pattern × path) at worst, whatever the robots.txt holds.
 */
export function matches(pattern: string, path: string): boolean {
  const glob = pattern.endsWith('$') ? pattern.slice(0, -1) : `${pattern}*`;
  let p = 0;
  let s = 0;
  let star = -1;
  let resume = 0;
  while (s < path.length) {
    if (p < glob.length && glob[p] !== '*' && glob[p] === path[s]) {
      p++;
      s++;
    } else if (p < glob.length && glob[p] === '*') {
      star = p++;
      resume = s;
    } else if (star >= 0) {
      p = star + 1;
      s = ++resume;
    } else return false;
  }
  while (p < glob.length && glob[p] === '*') p++;
  return p === glob.length;
}

/** The Disallow rules that keep crawlers from `url`; empty when it may be crawled. */
export function blockingRules(robotsTxt: string, url: string): string[] {
  const { pathname, search } = new URL(url);
  const path = pathname + search;
  if (pathname === '/robots.txt') return [];
  const matching = rulesFor(robotsTxt, ROBOTS_AGENT).filter((r) => matches(r.pattern, path));
  if (matching.length === 0) return [];
  const longest = Math.max(...matching.map((r) => r.pattern.length));
  const winners = matching.filter((r) => r.pattern.length === longest);
  if (winners.some((r) => r.allow)) return [];
  return matching.filter((r) => !r.allow).map((r) => r.pattern);
}

/** `robotsTxt` null: the site has none (or it could not be read), so nothing is disallowed. */
export function robots(robotsTxt: string | null, url: string): CheckResult {
  const failed = robotsTxt === null ? [] : blockingRules(robotsTxt, url);
  const shown = failed.slice(0, SHOWN.items).map((rule) => clip(rule, SHOWN.text));
  return check('high', failed.length === 0, null, { failed: shown });
}
