import { z } from 'zod';
import { SchemaConverter, type JsonSchema } from './json-schema.js';

/**
 * The OpenAPI 3.1 document, generated: each service lists its routes with the zod schemas that
 * validate their query and body (and zod schemas of what they answer), and this module turns the
 * list into paths and component schemas.
 */

/** A service's part of the OpenAPI 3.1 document: its paths and the component schemas they refer to. */
export interface OpenApiFragment {
  readonly paths: Record<string, Record<string, unknown>>;
  readonly schemas?: Record<string, unknown>;
}

/** One answer of a route: its description, and the zod schema of its JSON body (if it has one). */
export interface Answer {
  readonly description: string;
  readonly schema?: z.ZodType;
  /** Default application/json; another type's body is documented as a string. */
  readonly contentType?: string;
}

export type Method = 'get' | 'post' | 'put' | 'patch' | 'delete';
export type BodyType = 'application/json' | 'application/x-www-form-urlencoded' | 'multipart/form-data';

export interface RouteDoc {
  readonly method: Method;
  /** As registered (fastify's `:id`) or as OpenAPI writes it (`{id}`). */
  readonly path: string;
  readonly summary: string;
  readonly description?: string;
  /** Needs no credentials: the service's security scheme does not apply. */
  readonly public?: boolean;
  /** The path parameters, one property each. */
  readonly params?: z.ZodObject;
  /** The query parameters, one property each: the validator the route parses its query with. */
  readonly query?: z.ZodObject;
  /** The validator of the body; required when the schema requires a field. */
  readonly body?: z.ZodType;
  /** The body's media types, when not the service's. */
  readonly bodyTypes?: readonly BodyType[];
  /** The route's own answers (success, and errors particular to it). */
  readonly answers: Readonly<Record<number, Answer>>;
  /** The service's errors this route can answer: a status, or a status with its own description. */
  readonly errors?: readonly (number | readonly [number, string])[];
}

/** What every route of a service shares. */
export interface ServiceDoc {
  readonly tag: string;
  readonly security?: 'apiKey' | 'visitorToken' | 'workspaceToken';
  readonly bodyTypes: readonly BodyType[];
  /** The errors of the service by status, in its surface's shape. */
  readonly errors: Readonly<Record<number, Answer>>;
  /** Appended to every route's description. */
  readonly note?: string;
}

/** `true` when a documented record has exactly the fields of the type the service answers with. */
export type SameKeys<A, B> = [keyof A] extends [keyof B]
  ? [keyof B] extends [keyof A]
    ? true
    : false
  : false;

const openApiPath = (path: string) => path.replace(/:(\w+)/g, '{$1}');

/**
 * The OpenAPI paths and component schemas of a service's routes, converted when first read: a
 * process that serves no document does not pay for the conversion at start.
 */
export function describeRoutes(service: ServiceDoc, routes: readonly RouteDoc[]): OpenApiFragment {
  let fragment: OpenApiFragment | undefined;
  const built = () => (fragment ??= buildFragment(service, routes));
  return {
    get paths() {
      return built().paths;
    },
    get schemas() {
      return built().schemas;
    },
  };
}

function buildFragment(service: ServiceDoc, routes: readonly RouteDoc[]): OpenApiFragment {
  const converter = new SchemaConverter();
  const content = (answer: Answer) => {
    const type = answer.contentType ?? 'application/json';
    const schema = answer.schema ? converter.convert(answer.schema, 'output') : { type: 'string' };
    return { description: answer.description, content: { [type]: { schema } } };
  };
  const response = (answer: Answer) => (answer.schema || answer.contentType ? content(answer) : answer);

  const paths: Record<string, Record<string, unknown>> = {};
  for (const route of routes) {
    const responses: Record<string, unknown> = {};
    for (const [status, answer] of Object.entries(route.answers)) responses[status] = response(answer);
    for (const error of route.errors ?? []) {
      const [status, description] = typeof error === 'number' ? [error, undefined] : error;
      const answer = service.errors[status];
      if (!answer)
        throw new Error(`${route.method} ${route.path}: no ${status} error in the ${service.tag} service`);
      responses[status] = response(description ? { ...answer, description } : answer);
    }
    const parameters = [
      ...parametersOf(converter, route.params, 'path'),
      ...parametersOf(converter, route.query, 'query'),
    ];
    const description = [route.description, service.note].filter(Boolean).join(' ');
    const path = openApiPath(route.path);
    paths[path] = {
      ...paths[path],
      [route.method]: {
        tags: [service.tag],
        summary: route.summary,
        ...(description ? { description } : {}),
        ...(service.security && !route.public ? { security: [{ [service.security]: [] }] } : {}),
        ...(parameters.length > 0 ? { parameters } : {}),
        ...(route.body
          ? { requestBody: requestBody(converter, route.body, route.bodyTypes ?? service.bodyTypes) }
          : {}),
        responses,
      },
    };
  }
  return { paths, schemas: converter.components };
}

function requestBody(converter: SchemaConverter, body: z.ZodType, types: readonly BodyType[]): object {
  const schema = converter.convert(body, 'input');
  const required = Array.isArray(schema.required) && schema.required.length > 0;
  return { required, content: Object.fromEntries(types.map((type) => [type, { schema }])) };
}

/** One parameter per property of `object`; a property's description becomes the parameter's. */
function parametersOf(converter: SchemaConverter, object: z.ZodObject | undefined, where: 'path' | 'query') {
  if (!object) return [];
  const json = converter.convert(object, 'input');
  const required = new Set(json.required ?? []);
  return Object.entries(json.properties ?? {}).map(([name, property]) => {
    const { description, ...schema } = property as JsonSchema;
    return {
      name,
      in: where,
      required: where === 'path' || required.has(name),
      ...(description ? { description } : {}),
      schema,
    };
  });
}

/** The field errors of a 422: field → messages. */
const fieldMessages = z.record(z.string(), z.array(z.string()));

/** The error shapes of the surfaces (src/services/kit/errors.ts writes them). */
export const laravelError = z
  .object({ message: z.string(), status: z.int() })
  .meta({ id: 'LaravelError', description: 'An error of the websites and reports APIs.' });
export const laravelValidationError = z.object({ message: fieldMessages, status: z.literal(422) }).meta({
  id: 'LaravelValidationError',
  description: 'A 422 of the websites and reports APIs: the field errors sit under message.',
});
export const unauthenticated = z
  .object({ message: z.literal('Unauthenticated.') })
  .meta({ id: 'Unauthenticated' });
export const widgetError = z
  .object({
    error: z.object({ code: z.string(), message: z.string(), fields: fieldMessages.optional() }),
  })
  .meta({
    id: 'WidgetError',
    description:
      'An error of the widget and bulk-sync endpoints (and of the gateway itself, such as its 429).',
  });

const listLinks = z
  .object({ first: z.string(), last: z.string(), prev: z.string().nullable(), next: z.string().nullable() })
  .meta({
    id: 'ListLinks',
    description:
      'Each link is the public URL configured for the API (services.websites.publicUrl, ' +
      'services.reports.publicUrl) followed by the list path and the query with `page` set; with no ' +
      'public URL, the path and query alone. The Host and X-Forwarded-* headers of the request are ' +
      'never used. `meta.path` is built the same way.',
  });

const listMeta = z
  .object({
    current_page: z.int(),
    from: z.int().nullable(),
    last_page: z.int(),
    path: z.string(),
    per_page: z.int(),
    to: z.int().nullable(),
    total: z.int(),
  })
  .meta({ id: 'ListMeta' });

/** A page of a list in the Laravel envelope (src/services/kit/pagination.ts). */
export const listPage = (item: z.ZodType) =>
  z.object({ data: z.array(item), links: listLinks, meta: listMeta, status: z.literal(200) });

/** Merges the services' fragments into one OpenAPI 3.1 document. */
export function openApiDocument(fragments: readonly OpenApiFragment[]): object {
  const paths: Record<string, Record<string, unknown>> = {};
  const schemas: Record<string, unknown> = {};
  for (const fragment of fragments) {
    for (const [path, operations] of Object.entries(fragment.paths)) {
      paths[path] = { ...paths[path], ...operations };
    }
    for (const [id, schema] of Object.entries(fragment.schemas ?? {})) {
      if (id in schemas && JSON.stringify(schemas[id]) !== JSON.stringify(schema)) {
        throw new Error(`two services describe the component schema ${id} differently`);
      }
      schemas[id] = schema;
    }
  }
  return {
    openapi: '3.1.0',
    info: {
      title: 'tollgate embedded services',
      version: '1.0.0',
      description:
        'The websites API (every host but the analyzer host), the reports API (the analyzer host), ' +
        'the visitor widget (/api/v1/widget/...) and bulk sync (/v1/wp/...), as tollgate serves them.',
    },
    components: {
      securitySchemes: {
        apiKey: {
          type: 'http',
          scheme: 'bearer',
          description:
            'A user API key (websites and reports APIs). Also read, as the originals did, from the query parameter or body field api_token (first the query, then the body, then this header).',
        },
        visitorToken: {
          type: 'http',
          scheme: 'bearer',
          bearerFormat: 'JWT',
          description:
            'The visitor-session JWT from POST /api/v1/widget/init (or the X-Widget-Token header).',
        },
        workspaceToken: {
          type: 'http',
          scheme: 'bearer',
          description: 'A workspace API token, "<id>|<secret>" (tollgate tokens create).',
        },
      },
      schemas: Object.fromEntries(Object.entries(schemas).sort(([a], [b]) => a.localeCompare(b))),
    },
    paths,
  };
}
