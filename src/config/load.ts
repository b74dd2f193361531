import { readFile } from 'node:fs/promises';
import {
  isMap,
  isPair,
  isScalar,
  isSeq,
  LineCounter,
  parseDocument,
  visit,
  type Document,
  type Node,
} from 'yaml';
import { compileCorsPolicy, type CorsPolicy } from '../cors/policy.js';
import { parseRange } from '../identity/client-ip.js';
import { patternId } from '../envoy/descriptor-table.js';
import { hasTlsSettings, isTlsUrl } from '../store/redis-connection.js';
import { routeBodyBound } from './body-bound.js';
import { ConfigError, type ConfigIssue } from './errors.js';
import { interpolate, isWholeReference, MissingVariableError } from './interpolate.js';
import {
  buildRuleTable,
  compileLimiter,
  compileRoute,
  type CompiledLimiter,
  type RuleTable,
} from './rule-table.js';
import type { z } from 'zod';
import { configSchema, type GatewayConfig } from './schema.js';

type Path = (string | number)[];

/** Reads, interpolates, validates and compiles a config file. Throws ConfigError naming file:line:col and field. */
export async function loadConfigFile(file: string, env: NodeJS.ProcessEnv = process.env): Promise<RuleTable> {
  let text: string;
  try {
    text = await readFile(file, 'utf8');
  } catch (err) {
    throw new ConfigError(file, [{ path: [], message: `cannot read: ${(err as Error).message}` }]);
  }
  return loadConfigText(text, file, env);
}

export function loadConfigText(text: string, file: string, env: NodeJS.ProcessEnv = process.env): RuleTable {
  const lines = new LineCounter();
  const doc = parseDocument(text, { lineCounter: lines, prettyErrors: false });
  const at = (offset: number | undefined) => (offset === undefined ? {} : { ...linePos(lines, offset) });
  if (doc.errors.length > 0) {
    throw new ConfigError(
      file,
      // The first syntax error is the real one; those after it are mostly its echoes.
      doc.errors.slice(0, 3).map((e) => ({ path: [], message: e.message.split('\n')[0]!, ...at(e.pos[0]) })),
    );
  }
  const envIssues = substituteEnv(doc, env);
  if (envIssues.length > 0) {
    throw new ConfigError(
      file,
      envIssues.map(({ node, ...i }) => ({ ...i, ...at(node.range?.[0]) })),
    );
  }
  const locate = (issue: Omit<ConfigIssue, 'line' | 'col'>): ConfigIssue => ({
    ...issue,
    ...at(nearestNode(doc, issue.path)?.range?.[0]),
  });
  const parsed = configSchema.safeParse(doc.toJS() ?? {});
  if (!parsed.success) {
    throw new ConfigError(
      file,
      parsed.error.issues.flatMap(meantOption).map((i) => locate({ path: i.path, message: i.message })),
    );
  }
  const compiled = compile(parsed.data);
  if ('issues' in compiled) throw new ConfigError(file, compiled.issues.map(locate));
  return compiled.table;
}

/** A route's CORS policy: the named one it refers to, or its inline one (named after the route). */
function routeCors(
  ref: GatewayConfig['routes'][number]['cors'],
  policies: ReadonlyMap<string, CorsPolicy>,
  routeName: string,
  r: number,
  issues: ConfigIssue[],
): CorsPolicy | undefined {
  if (ref === undefined) return undefined;
  if (typeof ref !== 'string') return compileCorsPolicy(routeName, ref);
  const found = policies.get(ref);
  if (!found) issues.push({ path: ['routes', r, 'cors'], message: `unknown CORS policy "${ref}"` });
  return found;
}

/**
 * A union's failure ("a name, or an inline definition") explained by the option the value was
 * meant for: the one that did not fail on the value's type. Otherwise zod says "Invalid input".
 */
function meantOption(issue: z.core.$ZodIssue): { path: Path; message: string }[] {
  const path = issue.path as Path;
  if (issue.code !== 'invalid_union' || !('errors' in issue)) return [{ path, message: issue.message }];
  const meant = issue.errors.filter(
    (e) => !(e.length === 1 && e[0]!.code === 'invalid_type' && e[0]!.path.length === 0),
  );
  if (meant.length !== 1) return [{ path, message: issue.message }];
  return meant[0]!.flatMap((inner) =>
    meantOption({ ...inner, path: [...path, ...inner.path] } as z.core.$ZodIssue),
  );
}

function linePos(lines: LineCounter, offset: number): { line: number; col: number } {
  return lines.linePos(offset);
}

/** Replaces ${VAR} references in string scalars; a plain scalar that is one reference gets a typed value. */
function substituteEnv(doc: Document, env: NodeJS.ProcessEnv): (ConfigIssue & { node: Node })[] {
  const issues: (ConfigIssue & { node: Node })[] = [];
  visit(doc, {
    Scalar(_key, node, ancestors) {
      if (typeof node.value !== 'string' || !node.value.includes('${')) return;
      const original = node.value;
      try {
        const value = interpolate(original, env);
        node.value =
          node.type === 'PLAIN' && isWholeReference(original) && /^(true|false|-?\d+(\.\d+)?)$/.test(value)
            ? (JSON.parse(value) as number | boolean)
            : value;
      } catch (err) {
        if (!(err instanceof MissingVariableError)) throw err;
        issues.push({ path: pathOf(ancestors, node), message: err.message, node });
      }
    },
  });
  return issues;
}

/** The field path of a node from the visitor's ancestors. */
function pathOf(ancestors: readonly unknown[], node: unknown): Path {
  const path: Path = [];
  const chain = [...ancestors, node];
  for (let i = 0; i < chain.length - 1; i++) {
    const parent = chain[i];
    const child = chain[i + 1];
    if (isPair(parent) && child === parent.value && isScalar(parent.key)) path.push(String(parent.key.value));
    if (isSeq(parent)) path.push(parent.items.indexOf(child as never));
  }
  return path;
}

/** The node at a path, or its nearest existing ancestor (for a missing field, the map that lacks it). */
function nearestNode(doc: Document, path: readonly (string | number)[]): Node | undefined {
  for (let n = path.length; n >= 0; n--) {
    const node = doc.getIn(path.slice(0, n), true);
    if (node && typeof node === 'object' && 'range' in node) return node as Node;
  }
  return doc.contents && (isMap(doc.contents) || isSeq(doc.contents)) ? doc.contents : undefined;
}

/**
 * Windows without key parts: allowed only in limiters that answer Envoy's descriptors (keyed by the
 * descriptor's values), and never on a route, where a request's key parts say whose budget it spends.
 */
function keylessWindows(
  config: GatewayConfig,
  limiters: ReadonlyMap<string, CompiledLimiter>,
): ConfigIssue[] {
  const issues: ConfigIssue[] = [];
  const onRoute = new Map<string, string>();
  config.routes.forEach((route, r) =>
    route.limiters.forEach((ref, i) => {
      if (typeof ref === 'string') onRoute.set(ref, route.name);
      else if (ref.windows.some((w) => w.key.length === 0)) {
        const j = ref.windows.findIndex((w) => w.key.length === 0);
        issues.push({
          path: ['routes', r, 'limiters', i, 'windows', j, 'key'],
          message: "required on a route's limiter: the key parts that say whose budget a request spends",
        });
      }
    }),
  );
  for (const [name, cfg] of Object.entries(config.limiters)) {
    const j = cfg.windows.findIndex((w) => w.key.length === 0);
    if (j === -1) continue;
    const route = onRoute.get(name);
    if (route !== undefined || (limiters.get(name)?.descriptors.length ?? 0) === 0) {
      issues.push({
        path: ['limiters', name, 'windows', j, 'key'],
        message:
          route !== undefined
            ? `required: route "${route}" uses this limiter, and its key parts say whose budget a request spends`
            : "required (or descriptors, for Envoy's rate-limit service)",
      });
    }
  }
  return issues;
}

/** The same descriptor named by two limiters: the second would never answer. */
function claimedTwice(limiters: ReadonlyMap<string, CompiledLimiter>): ConfigIssue[] {
  const issues: ConfigIssue[] = [];
  const owner = new Map<string, string>();
  for (const limiter of limiters.values()) {
    limiter.descriptors.forEach((pattern, d) => {
      const id = patternId(pattern);
      const first = owner.get(id);
      if (first === undefined) owner.set(id, limiter.name);
      else {
        issues.push({
          path: ['limiters', limiter.name, 'descriptors', d],
          message: `limiter "${first}" already answers this descriptor`,
        });
      }
    });
  }
  return issues;
}

/** Cross-field checks and compilation into the immutable rule table. */
function compile(config: GatewayConfig): { table: RuleTable } | { issues: ConfigIssue[] } {
  const issues: ConfigIssue[] = [];
  config.identity.trustedProxies.forEach((cidr, i) => {
    try {
      parseRange(cidr);
    } catch (err) {
      issues.push({ path: ['identity', 'trustedProxies', i], message: (err as Error).message });
    }
  });

  for (const [name, upstream] of Object.entries(config.upstreams)) {
    if (!upstream.url && !upstream.embedded) {
      issues.push({
        path: ['upstreams', name, 'url'],
        message: 'set url, or embedded (websites, reports, widget or bulksync) to run a built-in service',
      });
    }
  }

  const policy = config.store.onError;
  const limiters = new Map<string, CompiledLimiter>();
  for (const [name, cfg] of Object.entries(config.limiters))
    limiters.set(name, compileLimiter(name, cfg, policy, config.shadow));

  const corsPolicies = new Map<string, CorsPolicy>();
  for (const [name, cfg] of Object.entries(config.cors)) corsPolicies.set(name, compileCorsPolicy(name, cfg));

  const routes = config.routes.map((route, r) => {
    if (!(route.upstream in config.upstreams)) {
      issues.push({ path: ['routes', r, 'upstream'], message: `unknown upstream "${route.upstream}"` });
    }
    const used = route.limiters.flatMap((ref, i): CompiledLimiter[] => {
      if (typeof ref !== 'string') {
        const name = ref.name ?? `${route.name}#${i}`;
        if (limiters.has(name))
          issues.push({ path: ['routes', r, 'limiters', i, 'name'], message: `duplicate limiter "${name}"` });
        const inline = compileLimiter(name, ref, policy, config.shadow);
        limiters.set(name, inline);
        return [inline];
      }
      const found = limiters.get(ref);
      if (!found) issues.push({ path: ['routes', r, 'limiters', i], message: `unknown limiter "${ref}"` });
      return found ? [found] : [];
    });
    const cors = routeCors(route.cors, corsPolicies, route.name, r, issues);
    return compileRoute(route, used, cors, routeBodyBound(config, route));
  });

  for (const [r, route] of routes.entries()) {
    const names = route.limiters.map((l) => l.name);
    const twice = names.find((n, i) => names.indexOf(n) !== i);
    if (twice)
      issues.push({ path: ['routes', r, 'limiters'], message: `limiter "${twice}" is listed twice` });
  }
  for (const limiter of limiters.values()) {
    // Two windows with the same period and key would share one store key and count each hit twice.
    const ids = limiter.windows.map((w) => `${w.periodMs}:${w.parts.join('+')}`);
    if (new Set(ids).size !== ids.length) {
      issues.push({
        path: ['limiters', limiter.name, 'windows'],
        message: `limiter "${limiter.name}" has two windows with the same period and key`,
      });
    }
    // A descriptor's budget is keyed by its values alone: two windows of one period would share it.
    const periods = limiter.windows.map((w) => w.periodMs);
    if (limiter.descriptors.length > 0 && new Set(periods).size !== periods.length) {
      issues.push({
        path: ['limiters', limiter.name, 'windows'],
        message: `limiter "${limiter.name}" answers descriptors, so its windows need different periods`,
      });
    }
  }
  issues.push(...keylessWindows(config, limiters), ...claimedTwice(limiters));
  for (const route of routes) {
    if (route.parts.has('jwt') && !config.identity.jwt) {
      issues.push({
        path: ['identity'],
        message: `route "${route.name}" has a limiter keyed by jwt, so identity.jwt must be configured`,
      });
    }
  }
  const { redis } = config.store;
  const speaksTls = redis.cluster.length > 0 ? redis.cluster.some(isTlsUrl) : isTlsUrl(redis.url);
  if (hasTlsSettings(redis.tls) && !speaksTls) {
    issues.push({
      path: ['store', 'redis', 'tls'],
      message: 'TLS settings need a rediss:// url (or rediss:// cluster seeds)',
    });
  }
  const sharedStore = config.store.redis.url !== '' || config.store.redis.cluster.length > 0;
  if (config.workers !== 1 && !sharedStore) {
    issues.push({
      path: ['workers'],
      message:
        'more than one worker needs a shared store (store.redis.url or store.redis.cluster): ' +
        'with the in-process store each worker would count on its own',
    });
  }
  const jwt = config.identity.jwt;
  if (jwt && !jwt.secret && !jwt.secretFile && jwt.publicKeys.length === 0 && !jwt.jwksFile) {
    issues.push({
      path: ['identity', 'jwt'],
      message: 'set one of secret, secretFile, publicKeys or jwksFile',
    });
  }
  if (issues.length > 0) return { issues };
  return { table: buildRuleTable(config, routes, limiters) };
}
