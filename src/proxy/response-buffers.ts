/**
 * The bytes of responses the gateway holds for clients that read slower than their upstream
 * answers. A response whose client falls behind takes a whole share at once and keeps it until its
 * client has caught up or it ends, so the held total never passes the budget whatever the chunk
 * sizes. Pure bookkeeping; the relay takes and gives.
 */
export class ResponseBuffers {
  #held = 0;

  /** Takes `share` bytes of a `total` budget; false when that would pass it. */
  take(share: number, total: number): boolean {
    if (share <= 0 || this.#held + share > total) return false;
    this.#held += share;
    return true;
  }

  give(share: number): void {
    this.#held -= share;
  }

  /** Bytes held now over every response. */
  get held(): number {
    return this.#held;
  }
}

/** The bounds in force (config `requests.responseBuffer`): one response's share, and the process's budget. */
export interface ResponseBufferLimits {
  readonly perResponse: number;
  readonly total: number;
}
