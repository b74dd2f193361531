import type { z } from 'zod';
import { didYouMean, suggestion } from './did-you-mean.js';

type Path = (string | number)[];

/** An issue to report: where (`key`: at the key itself, not its value) and what. */
export interface ExplainedIssue {
  readonly path: Path;
  readonly message: string;
  /** The path names a key that should not be there: point at the key's own line. */
  readonly atKey?: boolean;
}

/**
 * zod's issues in the words of the config: an unknown field names the allowed set and the closest
 * one; a field left out says it is required, and when an unknown field beside it is its typo, the
 * two become one ("limit is required; did you mean limit?", at the typo's line); an unknown enum
 * value names the options and the closest one. `input` is the config as parsed, before validation.
 */
export function explainIssues(
  issues: readonly z.core.$ZodIssue[],
  input: unknown,
  schema: z.ZodType,
): ExplainedIssue[] {
  const missing = issues.filter(
    (i) => i.code === 'invalid_type' && valueAt(input, i.path as Path) === undefined,
  );
  const mergedMissing = new Set<z.core.$ZodIssue>();
  const out: ExplainedIssue[] = [];
  for (const issue of issues) {
    const path = issue.path as Path;
    if (issue.code === 'unrecognized_keys') {
      const fields = fieldsAt(schema, path);
      for (const key of issue.keys) {
        // A required field missing beside it, that this key is a typo of.
        const typoOf = missing.find(
          (m) =>
            !mergedMissing.has(m) &&
            m.path.length === path.length + 1 &&
            samePrefix(m.path as Path, path) &&
            didYouMean(key, [String(m.path[path.length])]) !== undefined,
        );
        if (typoOf) {
          mergedMissing.add(typoOf);
          const field = String(typoOf.path[path.length]);
          out.push({
            path: [...path, key],
            message: `${field} is required; did you mean ${field}?`,
            atKey: true,
          });
          continue;
        }
        const allowed = fields ? `; allowed: ${fields.join(', ')}${suggestion(key, fields)}` : '';
        out.push({ path: [...path, key], message: `unknown field "${key}"${allowed}`, atKey: true });
      }
    } else if (issue.code === 'invalid_value' && typeof valueAt(input, path) === 'string') {
      const value = valueAt(input, path) as string;
      const options = issue.values.map(String);
      out.push({
        path,
        message: `unknown value "${value}"; expected one of ${options.join(', ')}${suggestion(value, options)}`,
      });
    } else {
      out.push({ path, message: issue.message });
    }
  }
  // Missing fields not explained by a typo: said plainly.
  return out.flatMap((i): ExplainedIssue[] => {
    const m = missing.find((x) => x.path === i.path || samePath(x.path as Path, i.path));
    if (!m) return [i];
    if (mergedMissing.has(m)) return [];
    return [{ path: i.path, message: `${String(i.path.at(-1))} is required` }];
  });
}

const samePrefix = (path: Path, prefix: Path) => prefix.every((p, i) => path[i] === p);
const samePath = (a: Path, b: Path) => a.length === b.length && samePrefix(a, b);

function valueAt(input: unknown, path: Path): unknown {
  let v = input;
  for (const p of path) {
    if (v === null || typeof v !== 'object') return undefined;
    v = (v as Record<string | number, unknown>)[p];
  }
  return v;
}

interface Def {
  readonly type: string;
  readonly shape?: Record<string, z.ZodType>;
  readonly innerType?: z.ZodType;
  readonly in?: z.ZodType;
  readonly options?: readonly z.ZodType[];
  readonly element?: z.ZodType;
  readonly valueType?: z.ZodType;
}

const defOf = (s: z.ZodType): Def => (s as unknown as { _zod: { def: Def } })._zod.def;

/** The objects a schema may be, through wrappers and unions. */
function objectsOf(s: z.ZodType | undefined): Def[] {
  if (!s) return [];
  const def = defOf(s);
  if (def.type === 'object') return [def];
  if (def.innerType) return objectsOf(def.innerType);
  if (def.type === 'pipe') return objectsOf(def.in);
  if (def.type === 'union') return def.options!.flatMap(objectsOf);
  return [];
}

/** What a schema holds at one step of a path (an array's element, a record's value, a field). */
function childOf(s: z.ZodType, step: string | number): z.ZodType[] {
  const def = defOf(s);
  if (def.innerType) return childOf(def.innerType, step);
  if (def.type === 'pipe') return childOf(def.in!, step);
  if (def.type === 'union') return def.options!.flatMap((o) => childOf(o, step));
  if (def.type === 'array' && typeof step === 'number') return [def.element!];
  if (def.type === 'record') return [def.valueType!];
  if (def.type === 'object' && typeof step === 'string' && def.shape![step]) return [def.shape![step]];
  return [];
}

/** The field names allowed in the object at `path`, or undefined when the schema does not say. */
export function fieldsAt(schema: z.ZodType, path: Path): string[] | undefined {
  let at: z.ZodType[] = [schema];
  for (const step of path) at = at.flatMap((s) => childOf(s, step));
  const objects = at.flatMap(objectsOf);
  if (objects.length === 0) return undefined;
  return [...new Set(objects.flatMap((o) => Object.keys(o.shape!)))];
}
