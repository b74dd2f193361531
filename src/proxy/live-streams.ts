/**
 * Responses that stay open indefinitely (Server-Sent Events). A graceful shutdown ends them at
 * once, so its drain waits for ordinary requests only; EventSource clients then reconnect.
 */
export class LiveStreams {
  readonly #ends = new Set<() => void>();
  #closing = false;

  /** Tracks a stream until the returned function is called; during shutdown it is ended at once. */
  add(end: () => void): () => void {
    if (this.#closing) {
      end();
      return () => {};
    }
    this.#ends.add(end);
    return () => this.#ends.delete(end);
  }

  get size(): number {
    return this.#ends.size;
  }

  endAll(): void {
    this.#closing = true;
    for (const end of [...this.#ends]) end();
    this.#ends.clear();
  }
}
