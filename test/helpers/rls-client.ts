import { Client, credentials, makeClientConstructor, type ServiceError } from '@grpc/grpc-js';
import { loadSync } from '@grpc/proto-loader';
import { fileURLToPath } from 'node:url';
import type { Gateway } from '../../src/runtime/gateway.js';

/** tollgate's rls.proto, as a client of Envoy's rate-limit service loads it. */
const PROTO = fileURLToPath(new URL('../../src/envoy/rls.proto', import.meta.url));
const METHOD = '/envoy.service.ratelimit.v3.RateLimitService/ShouldRateLimit';

export interface Entry {
  readonly key: string;
  readonly value: string;
}

/** A RateLimitRequest as Envoy's ratelimit filter sends it. */
export interface RlsRequest {
  readonly domain: string;
  readonly descriptors: readonly { readonly entries: readonly Entry[] }[];
  readonly hitsAddend?: number;
}

/** The response, decoded with every field present (defaults filled in, enums by name). */
export interface RlsResponse {
  overallCode: string;
  statuses: {
    code: string;
    currentLimit: { name: string; requestsPerUnit: number; unit: string } | null;
    limitRemaining: number;
    durationUntilReset: { seconds: number; nanos: number } | null;
  }[];
  responseHeadersToAdd: { key: string; value: string }[];
  requestHeadersToAdd: { key: string; value: string }[];
}

type Unary = (req: RlsRequest, cb: (err: ServiceError | null, res: RlsResponse) => void) => void;

/** A gRPC client of the rate-limit service, doing what Envoy's filter does: one unary call per request. */
export class RlsClient {
  readonly #client: Client & { ShouldRateLimit: Unary };
  readonly #raw: Client;

  constructor(address: string) {
    const definition = loadSync(PROTO, { keepCase: false, enums: String, longs: Number, defaults: true });
    const Service = makeClientConstructor(
      definition['envoy.service.ratelimit.v3.RateLimitService'] as never,
      'RateLimitService',
    );
    this.#client = new Service(address, credentials.createInsecure()) as unknown as Client & {
      ShouldRateLimit: Unary;
    };
    this.#raw = new Client(address, credentials.createInsecure());
  }

  shouldRateLimit(request: RlsRequest): Promise<RlsResponse> {
    return new Promise((resolve, reject) =>
      this.#client.ShouldRateLimit(request, (err, res) => (err ? reject(err) : resolve(res))),
    );
  }

  /** The call with the request's bytes as given, and the response's bytes as received. */
  raw(request: Buffer): Promise<Buffer> {
    return new Promise((resolve, reject) =>
      this.#raw.makeUnaryRequest(
        METHOD,
        (b: Buffer) => b,
        (b: Buffer) => b,
        request,
        (err, res) => (err ? reject(err) : resolve(res!)),
      ),
    );
  }

  close(): void {
    this.#client.close();
    this.#raw.close();
  }
}

/**
 * A fixture: a client of the gateway's rate-limit service, closed after the fixture's scope, as in
 * `.extend('rls', { scope: 'file' }, rlsClient)`, or called from a fixture that starts a gateway.
 */
export function rlsClient(
  { gateway }: { gateway: Gateway },
  { onCleanup }: { onCleanup: (cleanup: () => void) => void },
): RlsClient {
  const client = new RlsClient(gateway.rateLimitServiceAddress!);
  onCleanup(() => client.close());
  return client;
}

/** The status of a descriptor no limiter counts (unmatched, or let by uncounted): OK, no limit. */
export const UNMATCHED = { code: 'OK', currentLimit: null, limitRemaining: 0, durationUntilReset: null };

/** One protobuf field as read off the wire: its number, and a varint or the bytes of a length-delimited value. */
export interface WireField {
  readonly field: number;
  readonly value: number | Buffer;
}

/** Encodes a varint. */
export function varint(n: number): Buffer {
  const out: number[] = [];
  do {
    let byte = n % 128;
    n = Math.floor(n / 128);
    if (n > 0) byte |= 0x80;
    out.push(byte);
  } while (n > 0);
  return Buffer.from(out);
}

/** A length-delimited field (wire type 2). */
export const bytesField = (field: number, value: Buffer | string): Buffer => {
  const data = typeof value === 'string' ? Buffer.from(value) : value;
  return Buffer.concat([varint((field << 3) | 2), varint(data.length), data]);
};

/** A varint field (wire type 0). */
export const varintField = (field: number, value: number): Buffer =>
  Buffer.concat([varint(field << 3), varint(value)]);

/** Reads the top-level fields of a message (varint and length-delimited fields only, as these messages have). */
export function readFields(buf: Buffer): WireField[] {
  const fields: WireField[] = [];
  let at = 0;
  const next = () => {
    let n = 0;
    let mul = 1;
    for (;;) {
      const byte = buf[at++]!;
      n += (byte & 0x7f) * mul;
      mul *= 128;
      if (byte < 0x80) return n;
    }
  };
  while (at < buf.length) {
    const tag = next();
    const wireType = tag & 7;
    if (wireType === 0) fields.push({ field: tag >>> 3, value: next() });
    else if (wireType === 2) {
      const length = next();
      fields.push({ field: tag >>> 3, value: buf.subarray(at, at + length) });
      at += length;
    } else throw new Error(`unexpected wire type ${wireType}`);
  }
  return fields;
}
