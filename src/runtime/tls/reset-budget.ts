/**
 * A token bucket of stream resets for one HTTP/2 connection: `burst` resets at once, refilled at
 * `perSecond`. A client past it is resetting streams faster than any browser cancels them: the
 * rapid-reset attack (CVE-2023-44487), where each reset stream costs the server work but never
 * counts against the concurrent-streams bound. Pure: the caller passes the clock.
 */
export class ResetBudget {
  #tokens: number;
  #at: number;

  constructor(
    private readonly burst: number,
    private readonly perSecond: number,
    nowMs: number,
  ) {
    this.#tokens = burst;
    this.#at = nowMs;
  }

  /** Spends one reset at `nowMs`; false when the budget is exhausted (the connection must go). */
  spend(nowMs: number): boolean {
    const elapsed = Math.max(0, nowMs - this.#at);
    this.#at = nowMs;
    this.#tokens = Math.min(this.burst, this.#tokens + (elapsed * this.perSecond) / 1000);
    if (this.#tokens < 1) return false;
    this.#tokens -= 1;
    return true;
  }
}
