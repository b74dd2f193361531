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
import { ConfigError, type ConfigIssue } from './errors.js';
import { interpolate, isWholeReference, MissingVariableError } from './interpolate.js';
import { explainIssues } from './issue-text.js';
import type { z } from 'zod';
import { configSchema, type GatewayConfig } from './schema.js';

type Path = (string | number)[];

/** A validated config, and where in its file an issue found later (by src/rules/compile.ts) lies. */
export interface ParsedConfig {
  readonly config: GatewayConfig;
  readonly locate: (issue: Omit<ConfigIssue, 'line' | 'col'>) => ConfigIssue;
}

/** A config file's text. Throws ConfigError when it cannot be read. */
export async function readConfigFile(file: string): Promise<string> {
  try {
    return await readFile(file, 'utf8');
  } catch (err) {
    throw new ConfigError(file, [{ path: [], message: `cannot read: ${(err as Error).message}` }]);
  }
}

/** Parses, interpolates and validates a config. Throws ConfigError naming file:line:col and field. */
export function parseConfigText(
  text: string,
  file: string,
  env: NodeJS.ProcessEnv = process.env,
): ParsedConfig {
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
  const input: unknown = doc.toJS() ?? {};
  const parsed = configSchema.safeParse(input);
  if (!parsed.success) {
    const issues = explainIssues(parsed.error.issues.flatMap(meantOption), input, configSchema);
    throw new ConfigError(
      file,
      issues.map(({ path, message, atKey }) => ({
        path,
        message,
        ...(atKey ? at(keyNode(doc, path)?.range?.[0]) : locate({ path, message })),
      })),
    );
  }
  return { config: parsed.data, locate };
}

/**
 * A union's failure ("a name, or an inline definition") explained by the option the value was
 * meant for: the one that did not fail on the value's type. Otherwise zod says "Invalid input".
 */
function meantOption(issue: z.core.$ZodIssue): z.core.$ZodIssue[] {
  const path = issue.path as Path;
  if (issue.code !== 'invalid_union' || !('errors' in issue)) return [issue];
  const meant = issue.errors.filter(
    (e) => !(e.length === 1 && e[0]!.code === 'invalid_type' && e[0]!.path.length === 0),
  );
  if (meant.length !== 1) return [issue];
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

/** The key node of the pair at `path` (a field that should not be there), when the file has it. */
function keyNode(doc: Document, path: readonly (string | number)[]): Node | undefined {
  const parent = path.length === 1 ? doc.contents : doc.getIn(path.slice(0, -1), true);
  if (!isMap(parent)) return nearestNode(doc, path);
  const pair = parent.items.find((p) => isScalar(p.key) && String(p.key.value) === String(path.at(-1)));
  return pair && isScalar(pair.key) ? pair.key : nearestNode(doc, path);
}

/** The node at a path, or its nearest existing ancestor (for a missing field, the map that lacks it). */
function nearestNode(doc: Document, path: readonly (string | number)[]): Node | undefined {
  for (let n = path.length; n >= 0; n--) {
    const node = doc.getIn(path.slice(0, n), true);
    if (node && typeof node === 'object' && 'range' in node) return node as Node;
  }
  return doc.contents && (isMap(doc.contents) || isSeq(doc.contents)) ? doc.contents : undefined;
}
