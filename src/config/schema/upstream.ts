// An upstream: its URL or embedded service, connection bounds and timeouts.
import { z } from 'zod';
import { SERVICE_NAMES } from '../../service-names.js';
import { duration, positiveInt } from './primitives.js';

export const upstream = z.strictObject({
  url: z
    .union([z.literal(''), z.url({ protocol: /^https?$/ })])
    .default('')
    .meta({
      description:
        'Where to forward: http(s)://host:port[/base]; a base path is prefixed to forwarded paths. ' +
        'Empty: forward to the embedded service.',
    }),
  embedded: z.enum(SERVICE_NAMES).optional().meta({
    description:
      'The service to run in the gateway process (on a loopback port) when url is empty. One of url and embedded is required.',
  }),
  connections: positiveInt.default(128).meta({ description: 'The most connections the undici Pool opens.' }),
  connectRate: z
    .number()
    .int()
    .min(0)
    .default(100)
    .meta({
      description:
        'New connections per second the pool may open once its first `connections` are open ' +
        '(closed ones replaced, cancelled requests), so a flood of cancels never becomes a flood ' +
        'of connects. 0: not paced.',
    }),
  connectTimeout: duration.prefault('5s').meta({ description: 'Connecting for longer gives 504.' }),
  headersTimeout: duration
    .prefault('30s')
    .meta({ description: 'Waiting longer for the response headers gives 504.' }),
  bodyTimeout: duration.prefault('30s').meta({
    description: 'The idle time allowed between response body chunks; the response is cut off after it.',
  }),
  keepAliveTimeout: duration
    .prefault('4s')
    .meta({ description: 'Idle keep-alive sockets are closed after it.' }),
  preserveHost: z
    .boolean()
    .default(true)
    .meta({ description: "Forward the client's Host header (false: the upstream's host)." }),
  allowH2: z.boolean().default(false).meta({
    description:
      'Let an https upstream answer in HTTP/2 (negotiated by ALPN); otherwise upstreams are spoken to in HTTP/1.1.',
  }),
  streamConnections: positiveInt.default(1024).meta({
    description:
      'Connections kept apart for event streams (routes with stream: true), in a pool of their own so ' +
      'open streams never take the connections of ordinary requests. A stream past it gets 503.',
  }),
});
