import { describe, expect, test } from 'vitest';
import { z } from 'zod';
import { bulkSyncRouteDocs } from '../../../src/services/bulksync/openapi.js';
import { KIND_SPECS } from '../../../src/services/bulksync/kinds.js';
import { documentAs, SchemaConverter, type JsonSchema } from '../../../src/services/kit/json-schema.js';
import { describeRoutes, type RouteDoc } from '../../../src/services/kit/openapi.js';
import { reportRouteDocs } from '../../../src/services/reports/openapi.js';
import { websiteRouteDocs } from '../../../src/services/websites/openapi.js';
import { widgetRouteDocs } from '../../../src/services/widget/openapi.js';
import { widgetInboxRouteDocs } from '../../../src/services/widget/inbox/openapi.js';

const ROUTES: RouteDoc[] = [
  ...websiteRouteDocs,
  ...reportRouteDocs,
  ...widgetRouteDocs,
  ...widgetInboxRouteDocs,
  ...bulkSyncRouteDocs,
];

/** Every object a request is validated with: the routes' queries and bodies, and the sync items. */
function validators(): [string, z.ZodObject, 'query' | 'body'][] {
  const out: [string, z.ZodObject, 'query' | 'body'][] = [];
  for (const route of ROUTES) {
    const name = `${route.method.toUpperCase()} ${route.path}`;
    if (route.query) out.push([`${name} query`, route.query, 'query']);
    if (route.body instanceof z.ZodObject) out.push([`${name} body`, route.body, 'body']);
  }
  for (const spec of Object.values(KIND_SPECS)) {
    if (spec.item instanceof z.ZodObject) out.push([`${spec.kind} item`, spec.item, 'body']);
  }
  return out;
}

/** The non-null branch of a nullable property, and whether null is allowed. */
function unwrapNull(property: JsonSchema): { schema: JsonSchema; nullable: boolean } {
  const branches = property.anyOf;
  if (Array.isArray(branches) && branches.length === 2) {
    const rest = branches.filter((b) => (b as JsonSchema).type !== 'null');
    if (rest.length === 1) return { schema: rest[0] as JsonSchema, nullable: true };
  }
  return { schema: property, nullable: Array.isArray(property.type) && property.type.includes('null') };
}

describe('the request schemas of the document are the validators', () => {
  const cases = validators();

  test('every query and body is an object, and the three sync items too: all are checked', () => {
    const queries = ROUTES.filter((r) => r.query).length;
    const bodies = ROUTES.filter((r) => r.body).length;
    expect(queries).toBe(8);
    expect(bodies).toBe(26);
    expect(cases).toHaveLength(queries + bodies + 3);
  });

  test.each(cases)('%s: each bound, choice and default it states holds', (_, object, wire) => {
    const converter = new SchemaConverter();
    const converted = converter.convert(object, 'input');
    // An item with an id is a component: the body is a reference to it.
    const json = converted.$ref ? converter.components[converted.$ref.split('/').pop()!]! : converted;
    const required = new Set(json.required ?? []);
    expect(Object.keys(json.properties ?? {})).toEqual(Object.keys(object.shape));
    for (const [name, value] of Object.entries(json.properties ?? {})) {
      const property = value as JsonSchema;
      const field = object.shape[name] as z.ZodType;
      // A query carries strings; a body (form or JSON) may carry the values themselves.
      const accepts = (value: unknown) =>
        field.safeParse(wire === 'query' && value !== undefined ? String(value) : value).success;
      const { schema, nullable } = unwrapNull(property);
      const at = `${name} of ${JSON.stringify(schema)}`;
      // A list parameter the originals read leniently (per_page=5, sort=foo) takes its default
      // where another field is refused.
      const lenient = field.safeParse('not-a-value').success;
      const refused = (value: unknown) => {
        if (!lenient) return !accepts(value);
        const parsed = field.safeParse(wire === 'query' ? String(value) : value);
        return parsed.success && parsed.data === schema.default;
      };

      expect(accepts(undefined), at).toBe(!required.has(name));
      if (nullable) expect(accepts(null), at).toBe(true);
      for (const value of schema.enum ?? []) expect(accepts(value), `${at}: ${String(value)}`).toBe(true);
      if (schema.type === 'integer' && schema.enum) {
        expect(refused(Math.max(...(schema.enum as number[])) + 1), at).toBe(true);
      }
      if (schema.type === 'integer' || schema.type === 'number') {
        const { minimum, maximum } = schema;
        // The page is read leniently (anything but a positive integer is 1), never refused.
        if (minimum !== undefined && name !== 'page') {
          expect(accepts(minimum), at).toBe(true);
          expect(refused(minimum - 1), at).toBe(true);
        }
        if (maximum !== undefined) {
          expect(accepts(maximum), at).toBe(true);
          expect(refused(maximum + 1), at).toBe(true);
        }
      }
      if (schema.type === 'string' && schema.maxLength !== undefined) {
        expect(accepts('a'.repeat(schema.maxLength + 1)), at).toBe(false);
      }
      if (schema.type === 'array' && schema.minItems !== undefined && schema.minItems > 0) {
        expect(accepts([]), at).toBe(false);
      }
      // The default is what an absent field reads as (or what the handler applies: undefined here).
      if (property.default !== undefined) {
        const parsed = field.safeParse(undefined);
        expect(parsed.success, at).toBe(true);
        expect([undefined, property.default], at).toContainEqual(parsed.data);
      }
    }
  });
});

describe('SchemaConverter', () => {
  const flag = documentAs(
    z.string().transform((v) => v === 'yes'),
    { enum: ['yes', 'no'] },
  );

  test('a documented transform keeps its format through wrappers, with their description and default', () => {
    const body = z.object({
      plain: flag,
      described: flag.meta({ description: 'Said so.' }),
      optional: flag.optional().meta({ description: 'Maybe.', default: 'no' }),
      nullish: flag.nullish(),
      prefaulted: flag.prefault('no'),
    });
    expect(new SchemaConverter().convert(body, 'input')).toEqual({
      type: 'object',
      properties: {
        plain: { enum: ['yes', 'no'] },
        described: { description: 'Said so.', enum: ['yes', 'no'] },
        optional: { description: 'Maybe.', default: 'no', enum: ['yes', 'no'] },
        nullish: { anyOf: [{ enum: ['yes', 'no'] }, { type: 'null' }] },
        prefaulted: { default: 'no', enum: ['yes', 'no'] },
      },
      required: ['plain', 'described'],
    });
  });

  test('the format is the input: the output of the same transform is not described by it', () => {
    expect(new SchemaConverter().convert(z.object({ flag }), 'output')).toEqual({
      type: 'object',
      properties: { flag: {} },
      required: ['flag'],
      additionalProperties: false,
    });
  });

  test('a schema with an id becomes a component and is referred to', () => {
    const converter = new SchemaConverter();
    const point = z
      .object({ x: z.int(), y: z.literal([0, 1]) })
      .meta({ id: 'Point', description: 'A point.' });
    expect(converter.convert(z.object({ points: z.array(point) }), 'output')).toEqual({
      type: 'object',
      properties: { points: { type: 'array', items: { $ref: '#/components/schemas/Point' } } },
      required: ['points'],
      additionalProperties: false,
    });
    expect(converter.components).toEqual({
      Point: {
        type: 'object',
        description: 'A point.',
        properties: { x: { type: 'integer' }, y: { type: 'integer', enum: [0, 1] } },
        required: ['x', 'y'],
        additionalProperties: false,
      },
    });
  });

  test('one component id converted two ways (request and response) is refused', () => {
    const converter = new SchemaConverter();
    const thing = z.object({ n: z.int() }).meta({ id: 'Thing' });
    converter.convert(thing, 'output');
    expect(() => converter.convert(thing, 'input')).toThrow(
      'the component schema Thing converts differently where it is used again',
    );
  });
});

describe('describeRoutes', () => {
  const service = {
    tag: 'test',
    bodyTypes: ['application/json'] as const,
    errors: { 404: { description: 'Missing.' } },
  };

  test('an error status the service does not describe is refused (when the fragment is first read)', () => {
    const fragment = describeRoutes(service, [
      { method: 'get', path: '/x', summary: 'X', answers: { 200: { description: 'OK.' } }, errors: [409] },
    ]);
    expect(() => fragment.paths).toThrow('get /x: no 409 error in the test service');
  });

  test('paths in fastify syntax are written as OpenAPI paths; a body is required when a field is', () => {
    const { paths } = describeRoutes(service, [
      {
        method: 'put',
        path: '/things/:id',
        summary: 'Put a thing',
        params: z.object({ id: z.int().min(1).meta({ description: 'The id.' }) }),
        body: z.object({ name: z.string().max(10) }),
        answers: { 204: { description: 'Done.' } },
        errors: [[404, 'No such thing.']],
      },
    ]);
    expect(paths).toEqual({
      '/things/{id}': {
        put: {
          tags: ['test'],
          summary: 'Put a thing',
          parameters: [
            {
              name: 'id',
              in: 'path',
              required: true,
              description: 'The id.',
              schema: { type: 'integer', minimum: 1 },
            },
          ],
          requestBody: {
            required: true,
            content: {
              'application/json': {
                schema: {
                  type: 'object',
                  properties: { name: { type: 'string', maxLength: 10 } },
                  required: ['name'],
                },
              },
            },
          },
          responses: { 204: { description: 'Done.' }, 404: { description: 'No such thing.' } },
        },
      },
    });
  });
});
