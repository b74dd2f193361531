/**
 * The CSV exports running at once, per client address and in all (this process). A slot is taken
 * before an export starts and given back exactly once, however the download ends.
 */
export interface ExportLimits {
  /** Exports one address (IPv6: its /64) may run at once; 0: no bound. */
  readonly perAddress: number;
  /** Exports running at once in this process; 0: no bound. */
  readonly total: number;
}

/** Gives the slot back; calling it again does nothing. */
export type Release = () => void;

export class ExportSlots {
  readonly #byAddress = new Map<string, number>();
  #running = 0;

  constructor(private readonly limits: ExportLimits) {}

  get running(): number {
    return this.#running;
  }

  /** A slot for `address`, or undefined when a bound is reached. */
  acquire(address: string): Release | undefined {
    const held = this.#byAddress.get(address) ?? 0;
    const { perAddress, total } = this.limits;
    if ((perAddress > 0 && held >= perAddress) || (total > 0 && this.#running >= total)) return undefined;
    this.#byAddress.set(address, held + 1);
    this.#running += 1;
    let released = false;
    return () => {
      if (released) return;
      released = true;
      this.#running -= 1;
      const left = (this.#byAddress.get(address) ?? 1) - 1;
      if (left === 0) this.#byAddress.delete(address);
      else this.#byAddress.set(address, left);
    };
  }
}
