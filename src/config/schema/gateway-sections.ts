// The gateway-wide sections: request bounds, event streams, the Envoy rate-limit service, admin.
import { z } from 'zod';
import { bound, byteSize, duration, port } from './primitives.js';

export const requests = z.strictObject({
  maxBodySize: byteSize.optional().meta({
    description:
      'Body bound of every route that sets none (413 past it). Unset: services.maxBodySize. ' +
      '0: bodies are streamed unread and unbounded (an explicit opt-out).',
  }),
  bodyTimeout: duration
    .refine((d) => d >= 1, 'must be at least 1ms')
    .prefault('10s')
    .meta({ description: 'How long the gateway waits for a whole request body; 408 after it.' }),
  responseTimeout: duration
    .refine((d) => d >= 1, 'must be at least 1ms')
    .prefault('30s')
    .meta({
      description:
        'How long a response may wait on a client that takes none of its bytes (a full socket ' +
        'buffer, an HTTP/2 window at zero) before it is cut and its upstream request aborted.',
    }),
  responseBuffer: z
    .strictObject({
      perResponse: byteSize.prefault('256kb').meta({
        description:
          'Bytes of one response the gateway holds for a client that reads slower than the upstream ' +
          'answers, so the upstream connection is freed; past it the upstream waits on the client.',
      }),
      total: byteSize.prefault('64mb').meta({
        description:
          'Bytes all held responses may take in this process (each counts its whole perResponse share). 0: none is held.',
      }),
    })
    .prefault({})
    .meta({
      description:
        'Responses taken from the upstream ahead of a slow client (event streams never are), within ' +
        'the write deadline, so a slow or parked reader does not keep an upstream connection.',
    }),
  maxInFlightPerIp: bound.default(64).meta({
    description:
      'Requests one client IP (IPv6: its prefix) may have in flight in this process, event streams ' +
      'apart; one more gets 429. 0: no bound.',
  }),
  shedAfter: duration.prefault('500ms').meta({
    description:
      "Load shedding: while this process's event loop keeps running this late (two slow turns in a " +
      'row, measured with a 20ms timer), ' +
      'new requests get 503 overloaded with Retry-After before their body is read or they are ' +
      'counted. 0: never shed.',
  }),
});

export const streams = z.strictObject({
  maxPerSession: bound.default(3).meta({
    description:
      'Event streams one visitor session (verified JWT) may hold open in this process; a newer one ' +
      'gets 429. 0: no bound.',
  }),
  maxPerIp: bound.default(128).meta({
    description:
      'Event streams one client IP (IPv6: its prefix) may hold open in this process; a newer one ' +
      'gets 429. 0: no bound.',
  }),
});

export const rateLimitService = z.strictObject({
  host: z
    .string()
    .default('127.0.0.1')
    .meta({ description: 'The address to bind; only Envoy should reach it.' }),
  port: port.default(8081).meta({ description: 'The port; 0 takes any free port.' }),
  overrideKeys: z
    .record(z.string().min(1), z.enum(['token', 'workspace', 'sub', 'ip']))
    .default({ remote_address: 'ip' })
    .meta({
      description:
        'Descriptor entry keys whose value is looked up in the overrides (tiers.overrides), by kind: e.g. ' +
        '{ remote_address: ip, api_key: token, workspace_id: workspace }. Set, it replaces the default.',
    }),
});

export const admin = z.strictObject({
  host: z
    .string()
    .default('127.0.0.1')
    .meta({ description: 'The address to bind; keep it off the public network.' }),
  port: port.default(9091).meta({ description: 'The port; 0 takes any free port.' }),
  token: z
    .string()
    .optional()
    .transform((t) => (t === '' ? undefined : t))
    .meta({
      description:
        'The bearer token the admin API wants for anything but GET (overrides, bans). Empty or absent: the API is read-only.',
    }),
});
