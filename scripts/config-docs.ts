// Renders docs/configuration.md from the config's JSON Schema (itself generated from the zod
// schema, so the descriptions have one source) and the ${VAR:-default} references of the default
// config file. Pure: text in, text out; scripts/write-schema.ts writes and checks the file.
import { isMap, isPair, isScalar, isSeq, parseDocument, visit } from 'yaml';
import { references } from '../src/config/interpolate.js';

/** The subset of JSON Schema that z.toJSONSchema produces for the config. */
export interface JsonSchema {
  title?: string;
  description?: string;
  default?: unknown;
  type?: string;
  enum?: unknown[];
  const?: unknown;
  format?: string;
  anyOf?: JsonSchema[];
  items?: JsonSchema;
  properties?: Record<string, JsonSchema>;
  additionalProperties?: JsonSchema | boolean;
  required?: string[];
  minimum?: number;
  maximum?: number;
  exclusiveMinimum?: number;
  minItems?: number;
}

/** One documented field: its dotted path, where it sits, and what the schema says of it. */
export interface ConfigField {
  readonly path: string;
  /** Nesting depth: 0 for a top-level key. */
  readonly depth: number;
  readonly schema: JsonSchema;
  readonly required: boolean;
  /** Fields of an object that are the same as fields documented elsewhere (inline limiters). */
  readonly sameAs?: { readonly names: string[]; readonly path: string };
}

/** A reference to an environment variable in the default config file. */
export interface EnvReference {
  readonly variable: string;
  /** The text after ":-", or undefined when the reference has none. */
  readonly fallback: string | undefined;
  /** The schema path of the field it sets (`routes[].maxBodySize`). */
  readonly field: string;
  /** The route or listener it sits in, by name, when it sits in a list. */
  readonly within: string | undefined;
}

const MAX_SAFE = Number.MAX_SAFE_INTEGER;

/** The fields of the schema, depth first, in schema order. */
export function configFields(root: JsonSchema): ConfigField[] {
  const out: ConfigField[] = [];
  const seen = new Map<string, string>(); // "name + schema" -> first path
  const walk = (schema: JsonSchema, prefix: string, depth: number) => {
    const props = schema.properties ?? {};
    const repeated: string[] = [];
    let repeatedOf: string | undefined;
    for (const [key, child] of Object.entries(props)) {
      const path = prefix ? `${prefix}.${key}` : key;
      const identity = `${key}:${JSON.stringify(child)}`;
      const earlier = seen.get(identity);
      if (earlier !== undefined) {
        repeated.push(key);
        repeatedOf ??= earlier.slice(0, earlier.lastIndexOf('.'));
        continue;
      }
      seen.set(identity, path);
      out.push({ path, depth, schema: child, required: schema.required?.includes(key) ?? false });
      descend(child, path, depth + 1);
    }
    if (repeated.length > 0 && repeatedOf !== undefined) {
      const ownerPath = prefix.replace(/(\[\]|\.<name>)+$/, ''); // the list or map holding these objects
      const owner = out.findLast((f) => f.path === ownerPath);
      if (owner) out[out.indexOf(owner)] = { ...owner, sameAs: { names: repeated, path: repeatedOf } };
    }
  };
  const descend = (schema: JsonSchema, path: string, depth: number) => {
    if (schema.properties) walk(schema, path, depth);
    if (schema.type === 'array' && schema.items) descend(schema.items, `${path}[]`, depth);
    if (typeof schema.additionalProperties === 'object') {
      descend(schema.additionalProperties, `${path}.<name>`, depth);
    }
    for (const alternative of schema.anyOf ?? []) descend(alternative, path, depth);
  };
  walk(root, '', 0);
  return out;
}

/** A short, readable type: the schema's title when it has one (duration, size, name), else derived. */
export function typeOf(schema: JsonSchema): string {
  if (schema.title) return schema.title;
  if (schema.enum) return `one of ${schema.enum.map((v) => code(String(v))).join(', ')}`;
  if (schema.const !== undefined) return code(JSON.stringify(schema.const));
  if (schema.anyOf) {
    const alternatives = schema.anyOf.filter((a) => !(a.type === 'string' && a.const === ''));
    const empty = alternatives.length < schema.anyOf.length ? ' (or empty)' : '';
    return alternatives.map(typeOf).join(' or ') + empty;
  }
  switch (schema.type) {
    case 'array': {
      const items = schema.items?.anyOf && !schema.items.title ? schema.items.anyOf : [schema.items ?? {}];
      return `list of ${items.map((i) => plural(typeOf(i))).join(' or ')}${atLeast(schema)}`;
    }
    case 'object':
      return typeof schema.additionalProperties === 'object' ? 'map of name to object' : 'object';
    case 'integer':
    case 'number':
      return `${schema.type}${bounds(schema)}`;
    case 'string':
      return schema.format === 'uri' ? 'URL' : 'string';
    default:
      return schema.type ?? 'any';
  }
}

function plural(type: string): string {
  if (type.startsWith('one of ') || type.startsWith('`')) return type;
  if (type === 'object') return 'objects';
  return /^[a-z ]+$/.test(type) ? `${type}s` : type;
}

function atLeast(schema: JsonSchema): string {
  return schema.minItems ? ` (at least ${schema.minItems})` : '';
}

function bounds(schema: JsonSchema): string {
  const low =
    schema.exclusiveMinimum !== undefined
      ? schema.exclusiveMinimum + 1
      : schema.minimum !== undefined
        ? schema.minimum
        : undefined;
  const high = schema.maximum !== undefined && schema.maximum < MAX_SAFE ? schema.maximum : undefined;
  if (low !== undefined && high !== undefined) return ` ${low}–${high}`;
  if (low !== undefined) return ` ≥ ${low}`;
  if (high !== undefined) return ` ≤ ${high}`;
  return '';
}

function code(text: string): string {
  return text.includes('`') ? `\`\` ${text} \`\`` : `\`${text}\``;
}

function defaultOf(field: ConfigField): string {
  const value = field.schema.default;
  if (field.required) return 'required';
  if (value === undefined) return 'optional';
  if (typeof value === 'object' && value !== null && !Array.isArray(value)) return '';
  return `default ${code(typeof value === 'string' ? (value === '' ? '""' : value) : JSON.stringify(value))}`;
}

/** GitHub's heading anchor for a heading text (lower case; punctuation but "-" and "_" dropped). */
export function headingAnchor(text: string): string {
  return text
    .trim()
    .toLowerCase()
    .replace(/[^\p{L}\p{N}\s_-]/gu, '')
    .replace(/\s/g, '-');
}

/** The `${VAR}` references of a config file, with the schema path of the field each one sets. */
export function envReferences(yamlText: string): EnvReference[] {
  const doc = parseDocument(yamlText);
  const out: EnvReference[] = [];
  visit(doc, {
    Scalar(_key, node, ancestors) {
      if (typeof node.value !== 'string') return;
      const path: string[] = [];
      let within: string | undefined;
      const chain = [...ancestors, node];
      for (let i = 0; i < chain.length - 1; i++) {
        const parent = chain[i];
        const child = chain[i + 1];
        if (isPair(parent) && child === parent.value && isScalar(parent.key))
          path.push(String(parent.key.value));
        if (isSeq(parent)) {
          path[path.length - 1] += '[]';
          const item = chain[i + 1];
          if (isMap(item)) within = String(item.get('name') ?? '') || within;
        }
      }
      for (const r of references(node.value)) {
        out.push({ variable: r.name, fallback: r.fallback, field: path.join('.'), within });
      }
    },
  });
  return out;
}

export interface ConfigDocsInput {
  readonly schema: JsonSchema;
  /** The default config file's text, and its path relative to the docs page. */
  readonly defaultConfig: { readonly text: string; readonly link: string; readonly name: string };
  /** Hand-written introduction (markdown), placed after the title. */
  readonly intro: string;
}

/** docs/configuration.md. */
export function renderConfigDocs({ schema, defaultConfig, intro }: ConfigDocsInput): string {
  const fields = configFields(schema);
  const lines: string[] = [
    '# Configuration reference',
    '',
    '<!-- Generated by `npm run schema` from src/config/schema.ts and config/gateway.yaml; do not edit. -->',
    '',
    intro.trim(),
    '',
  ];

  lines.push('## Sections', '');
  for (const f of fields.filter((f) => f.depth === 0)) {
    lines.push(
      `- [\`${f.path}\`](#${headingAnchor(f.path)}): ${escapeMarkdown(firstSentence(f.schema.description))}`,
    );
  }
  lines.push('');

  for (const f of fields) {
    lines.push(`${f.depth === 0 ? '##' : '###'} \`${f.path}\``, '');
    lines.push(`_${[typeOf(f.schema), defaultOf(f)].filter(Boolean).join(' · ')}_`, '');
    if (f.schema.description) lines.push(escapeMarkdown(f.schema.description), '');
    if (f.sameAs) {
      const names = f.sameAs.names.map((n) => `\`${n}\``).join(', ');
      const section = f.sameAs.path.replace(/(\[\]|\.<name>)+$/, '');
      lines.push(
        `Its objects also take ${names}, as in [\`${f.sameAs.path}\`](#${headingAnchor(section)}).`,
        '',
      );
    }
  }

  const descriptions = new Map(fields.map((f) => [f.path, f.schema.description]));
  lines.push(...envSection(envReferences(defaultConfig.text), defaultConfig, descriptions));
  return `${lines.join('\n').trimEnd()}\n`;
}

function envSection(
  refs: readonly EnvReference[],
  config: ConfigDocsInput['defaultConfig'],
  descriptions: ReadonlyMap<string, string | undefined>,
): string[] {
  const documented = new Set(descriptions.keys());
  const byVariable = new Map<string, EnvReference[]>();
  for (const r of refs) byVariable.set(r.variable, [...(byVariable.get(r.variable) ?? []), r]);
  const lines = [
    `## Environment variables of \`${config.name}\``,
    '',
    `[\`${config.name}\`](${config.link}) reads these variables at start (and at each reload).`,
    '',
  ];
  for (const [variable, uses] of byVariable) {
    const fallback = uses[0]!.fallback;
    const shown =
      fallback === undefined ? 'required' : fallback === '' ? 'default: empty' : `default \`${fallback}\``;
    const targets = uses.map((u) => {
      const path = documentedPath(u.field, documented);
      const field = path ? `[\`${u.field}\`](#${headingAnchor(path)})` : `\`${u.field}\``;
      return u.within ? `${field} (in \`${u.within}\`)` : field;
    });
    const meaning = firstSentence(descriptions.get(documentedPath(uses[0]!.field, documented) ?? ''));
    lines.push(
      `- \`${variable}\` (${shown}) sets ${targets.join(', ')}${meaning ? `: ${escapeMarkdown(meaning)}` : ''}`,
    );
  }
  return lines;
}

/** Descriptions are plain text (editors show them too): markdown's own characters are escaped, `code` kept. */
export function escapeMarkdown(text: string): string {
  return text
    .split(/(`[^`]*`)/)
    .map((part, i) => (i % 2 === 1 ? part : part.replace(/[\\*_<>[\]|]/g, (c) => `\\${c}`)))
    .join('');
}

/** The documented path a concrete one falls under: `upstreams.widget.url` is `upstreams.<name>.url`. */
function documentedPath(field: string, documented: ReadonlySet<string>): string | undefined {
  if (documented.has(field)) return field;
  const parts = field.split('.');
  for (let i = 0; i < parts.length; i++) {
    const candidate = [...parts.slice(0, i), '<name>', ...parts.slice(i + 1)].join('.');
    if (documented.has(candidate)) return candidate;
  }
  return undefined;
}

function firstSentence(text: string | undefined): string {
  if (!text) return '';
  // A full stop that ends a sentence: not the one of "e.g." or "i.e.".
  const end = text.search(/(?<!\b(?:e\.g|i\.e))\.(\s|$)/);
  return end === -1 ? text : text.slice(0, end + 1);
}
