/** A service's part of the OpenAPI 3.1 document: its paths and the component schemas they refer to. */
export interface OpenApiFragment {
  readonly paths: Record<string, Record<string, unknown>>;
  readonly schemas?: Record<string, unknown>;
}

/** Schemas every surface refers to (`#/components/schemas/<name>`). */
const SHARED_SCHEMAS: Record<string, unknown> = {
  LaravelError: {
    type: 'object',
    description: 'An error of the websites and reports APIs.',
    required: ['message', 'status'],
    properties: { message: { type: 'string' }, status: { type: 'integer' } },
  },
  LaravelValidationError: {
    type: 'object',
    description: 'A 422 of the websites and reports APIs: the field errors sit under message.',
    required: ['message', 'status'],
    properties: {
      message: { type: 'object', additionalProperties: { type: 'array', items: { type: 'string' } } },
      status: { const: 422 },
    },
  },
  Unauthenticated: {
    type: 'object',
    required: ['message'],
    properties: { message: { const: 'Unauthenticated.' } },
  },
  WidgetError: {
    type: 'object',
    description:
      'An error of the widget and bulk-sync endpoints (and of the gateway itself, such as its 429).',
    required: ['error'],
    properties: {
      error: {
        type: 'object',
        required: ['code', 'message'],
        properties: {
          code: { type: 'string' },
          message: { type: 'string' },
          fields: { type: 'object', additionalProperties: { type: 'array', items: { type: 'string' } } },
        },
      },
    },
  },
  ListLinks: {
    type: 'object',
    description:
      'Each link is the public URL configured for the API (services.websites.publicUrl, ' +
      'services.reports.publicUrl) followed by the list path and the query with `page` set; with no ' +
      'public URL, the path and query alone. The Host and X-Forwarded-* headers of the request are ' +
      'never used. `meta.path` is built the same way.',
    required: ['first', 'last', 'prev', 'next'],
    properties: {
      first: { type: 'string' },
      last: { type: 'string' },
      prev: { type: ['string', 'null'] },
      next: { type: ['string', 'null'] },
    },
  },
  ListMeta: {
    type: 'object',
    required: ['current_page', 'from', 'last_page', 'path', 'per_page', 'to', 'total'],
    properties: {
      current_page: { type: 'integer' },
      from: { type: ['integer', 'null'] },
      last_page: { type: 'integer' },
      path: { type: 'string' },
      per_page: { type: 'integer' },
      to: { type: ['integer', 'null'] },
      total: { type: 'integer' },
    },
  },
};

/** Merges the services' fragments into one OpenAPI 3.1 document. */
export function openApiDocument(fragments: readonly OpenApiFragment[]): object {
  const paths: Record<string, Record<string, unknown>> = {};
  const schemas: Record<string, unknown> = { ...SHARED_SCHEMAS };
  for (const fragment of fragments) {
    for (const [path, operations] of Object.entries(fragment.paths)) {
      paths[path] = { ...paths[path], ...operations };
    }
    Object.assign(schemas, fragment.schemas);
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
          description: 'A user API key (websites and reports APIs).',
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
      schemas,
    },
    paths,
  };
}
