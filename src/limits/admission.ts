import { InFlight } from './in-flight.js';
import type { Refusal } from './refusal.js';

/** The stream bounds in force (0: no bound), read from the current config on every admission. */
export interface StreamBounds {
  readonly maxStreamsPerSession: number;
  readonly maxStreamsPerIp: number;
  /** The stream budget of the stream's upstream (its streamConnections). */
  readonly streamConnections: number;
}

/** Who holds an event stream, and on which upstream. */
export interface StreamHolder {
  /** The client IP in key form (IPv6: its prefix). */
  readonly ip: string;
  /** The verified visitor session; undefined when the request carries none. */
  readonly session: string | undefined;
  readonly upstream: string;
}

/** A slot of an ordinary request frees within its upstream's answer time, so a second is enough. */
const REQUEST_RETRY_AFTER_SEC = 1;
/** A stream's slot frees only when one of the client's own streams closes. */
const STREAM_RETRY_AFTER_SEC = 5;

const requestsInFlight = (max: number): Refusal => ({
  status: 429,
  code: 'too_many_requests_in_flight',
  decision: 'too_many_in_flight',
  message: `More than ${max} requests from this address are in progress. Retry when one has finished.`,
  retryAfterSec: REQUEST_RETRY_AFTER_SEC,
});

const streamsOf = (holder: string, max: number): Refusal => ({
  status: 429,
  code: 'too_many_streams',
  decision: 'too_many_streams',
  message: `This ${holder} already holds ${max} open event streams. Close one before opening another.`,
  retryAfterSec: STREAM_RETRY_AFTER_SEC,
});

const STREAMS_FULL: Refusal = {
  status: 503,
  code: 'stream_capacity_reached',
  decision: 'too_many_streams',
  message: 'The gateway holds as many event streams as it can. Please retry shortly.',
  retryAfterSec: STREAM_RETRY_AFTER_SEC,
};

/**
 * The per-process concurrency caps: ordinary requests in flight per client IP, and event streams
 * per visitor session, per client IP and per upstream (its stream pool). Taking a stream's slots is
 * all or nothing: a refused stream holds none. Admission is concurrency only: counting a request
 * in its limiters' windows is http/count-request.ts's. Pure bookkeeping; the HTTP layer releases.
 */
export class Admission {
  readonly requestsPerIp = new InFlight();
  readonly streamsPerSession = new InFlight();
  readonly streamsPerIp = new InFlight();
  readonly streamsPerUpstream = new InFlight();

  /** Takes a request slot of `ip`; a refusal when it holds `max` already. */
  admitRequest(ip: string, max: number): Refusal | undefined {
    return this.requestsPerIp.tryAcquire(ip, max) ? undefined : requestsInFlight(max);
  }

  releaseRequest(ip: string): void {
    this.requestsPerIp.release(ip);
  }

  /** Takes the stream's slots (session, IP, upstream), in that order, or none of them. */
  admitStream(holder: StreamHolder, bounds: StreamBounds): Refusal | undefined {
    const { session, ip, upstream } = holder;
    if (session !== undefined && !this.streamsPerSession.tryAcquire(session, bounds.maxStreamsPerSession)) {
      return streamsOf('visitor session', bounds.maxStreamsPerSession);
    }
    if (!this.streamsPerIp.tryAcquire(ip, bounds.maxStreamsPerIp)) {
      if (session !== undefined) this.streamsPerSession.release(session);
      return streamsOf('address', bounds.maxStreamsPerIp);
    }
    if (!this.streamsPerUpstream.tryAcquire(upstream, bounds.streamConnections)) {
      if (session !== undefined) this.streamsPerSession.release(session);
      this.streamsPerIp.release(ip);
      return STREAMS_FULL;
    }
    return undefined;
  }

  releaseStream(holder: StreamHolder): void {
    if (holder.session !== undefined) this.streamsPerSession.release(holder.session);
    this.streamsPerIp.release(holder.ip);
    this.streamsPerUpstream.release(holder.upstream);
  }

  /** Slots held over every cap: 0 when nothing is in flight (for tests and shutdown checks). */
  get held(): number {
    return (
      this.requestsPerIp.total +
      this.streamsPerSession.total +
      this.streamsPerIp.total +
      this.streamsPerUpstream.total
    );
  }
}
