import { buildConnector } from 'undici';

/**
 * When each new connection may start: `burst` at once, then one per 1/`perSecond` s (a virtual
 * scheduling of the token bucket: GCRA). Pure: the caller passes the clock.
 */
export class ConnectPacer {
  readonly #interval: number;
  readonly #tolerance: number;
  /** When the bucket would be full again. */
  #fullAt = 0;

  constructor(burst: number, perSecond: number) {
    this.#interval = 1000 / perSecond;
    this.#tolerance = (burst - 1) * this.#interval;
  }

  /** Reserves the next connect at `nowMs`: how long (ms) it must wait first. */
  reserve(nowMs: number): number {
    const at = Math.max(this.#fullAt, nowMs);
    const wait = Math.max(0, at - nowMs - this.#tolerance);
    this.#fullAt = at + this.#interval;
    return wait;
  }
}

/**
 * undici's connector, paced: a flood of cancelled requests (each cancel in flight costs its
 * connection) cannot become a flood of upstream connects. Connects past the burst wait their turn;
 * requests cancelled meanwhile leave the pool's queue without one. `perSecond` 0: not paced.
 */
export function pacedConnector(
  options: buildConnector.BuildOptions,
  burst: number,
  perSecond: number,
): buildConnector.connector {
  const connect = buildConnector(options);
  if (perSecond === 0) return connect;
  const pacer = new ConnectPacer(burst, perSecond);
  return (opts, callback) => {
    const wait = pacer.reserve(Date.now());
    if (wait === 0) return connect(opts, callback);
    setTimeout(() => connect(opts, callback), wait).unref();
  };
}
