import { z } from 'zod';

/**
 * JSON Schema of the services' zod schemas, for the OpenAPI document: the request validators
 * (io "input": what a client may send) and the response shapes (io "output").
 */

export type JsonSchema = z.core.JSONSchema.BaseSchema;

/**
 * What a value read by a transform is documented as. z.toJSONSchema cannot see through a transform
 * (a form field parsed from its string, a flag read from "on" or "yes"), so the field builders that
 * use one register the value they accept here, from the same arguments that drive the parse.
 */
const wireFormats = z.registry<JsonSchema>();

/** Registers the JSON Schema of the input `schema` accepts; returns `schema`. */
export function documentAs<S extends z.ZodType>(schema: S, json: JsonSchema): S {
  wireFormats.add(schema, json);
  return schema;
}

/** Keys a documented format leaves in place: what `.meta()` and the wrappers said about the field. */
const ANNOTATIONS = new Set(['description', 'title', 'default', 'examples', 'deprecated']);

function override(io: 'input' | 'output') {
  return ({ zodSchema, jsonSchema }: { zodSchema: z.core.$ZodType; jsonSchema: JsonSchema }) => {
    const json = jsonSchema as Record<string, unknown>;
    const format = io === 'input' ? wireFormats.get(zodSchema) : undefined;
    if (format) {
      for (const key of Object.keys(json)) if (!ANNOTATIONS.has(key)) delete json[key];
      Object.assign(json, format);
    }
    // zod drops a transforming field's default from its input schema (the default of the output);
    // a request field's `.meta({ default })` is what the handler applies when the field is absent.
    const meta = io === 'input' ? z.globalRegistry.get(zodSchema) : undefined;
    if (meta?.default !== undefined) json.default = meta.default;
    // zod writes a number literal's type as "number"; an integer one is an integer.
    const values = Array.isArray(json.enum) ? json.enum : 'const' in json ? [json.const] : [];
    if (json.type === 'number' && values.length > 0 && values.every(Number.isInteger)) json.type = 'integer';
    // JSON object keys are strings anyway.
    const names = json.propertyNames as JsonSchema | undefined;
    if (names?.type === 'string' && Object.keys(names).length === 1) delete json.propertyNames;
    // The format says it; zod's regex for it is a screenful.
    if (json.format === 'date-time') delete json.pattern;
    // z.int()'s safe-integer bounds: no JSON number beyond them is exact anyway.
    if (json.minimum === Number.MIN_SAFE_INTEGER) delete json.minimum;
    if (json.maximum === Number.MAX_SAFE_INTEGER) delete json.maximum;
  };
}

const DEFS = '#/$defs/';
const COMPONENTS = '#/components/schemas/';

/** Rewrites the `$defs` references of one conversion to the document's component schemas. */
function pointAtComponents(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(pointAtComponents);
  if (typeof value !== 'object' || value === null) return value;
  const out: Record<string, unknown> = {};
  for (const [key, inner] of Object.entries(value)) {
    out[key] =
      key === '$ref' && typeof inner === 'string' && inner.startsWith(DEFS)
        ? COMPONENTS + inner.slice(DEFS.length)
        : pointAtComponents(inner);
  }
  return out;
}

/**
 * Converts zod schemas to the JSON Schema of an OpenAPI 3.1 document. A schema with an `id` in its
 * `.meta()` becomes a component (`#/components/schemas/<id>`), collected in `components`.
 */
export class SchemaConverter {
  readonly components: Record<string, JsonSchema> = {};

  convert(schema: z.ZodType, io: 'input' | 'output'): JsonSchema {
    const converted = z.toJSONSchema(schema, {
      io,
      target: 'draft-2020-12',
      unrepresentable: 'any',
      cycles: 'throw',
      override: override(io),
    });
    const { $schema: _dialect, $defs, ...json } = converted;
    for (const [id, def] of Object.entries($defs ?? {})) this.addComponent(id, pointAtComponents(def));
    return pointAtComponents(json) as JsonSchema;
  }

  private addComponent(id: string, json: unknown): void {
    // Only schemas with an id are extracted (reused ones are inlined): anything else is a slip.
    if (id.startsWith('__schema')) throw new Error(`an unnamed schema was extracted as ${id}`);
    const existing = this.components[id];
    if (existing !== undefined && JSON.stringify(existing) !== JSON.stringify(json)) {
      throw new Error(`the component schema ${id} converts differently where it is used again`);
    }
    this.components[id] = json as JsonSchema;
  }
}
