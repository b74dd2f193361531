import type { Logger } from 'pino';
import type { RuleTable } from '../rules/compile.js';
import { diffRules } from '../rules/diff.js';
import { changedRestartOnlyFields } from './restart-only.js';
import type { GatewayState } from '../http/state.js';
import { buildState, closeState, type StateOptions } from './build-state.js';

/**
 * The request path's current state. A reload builds the next state beside it and swaps it in at
 * once: requests already in flight finish under the one they took. Counters live in the store, so
 * they survive; a changed limit applies to them at once.
 */
export class LiveState {
  #current: GatewayState;

  private constructor(
    state: GatewayState,
    private readonly options: StateOptions & { readonly logger: Logger },
  ) {
    this.#current = state;
  }

  static async build(
    table: RuleTable,
    options: StateOptions & { readonly logger: Logger },
  ): Promise<LiveState> {
    return new LiveState(await buildState(table, options), options);
  }

  get current(): GatewayState {
    return this.#current;
  }

  /** Swaps in the state of `table` and returns the one it replaced. An invalid table changes nothing. */
  async reload(table: RuleTable): Promise<GatewayState> {
    const old = this.#current;
    this.#current = await buildState(table, this.options, old);
    const { logger } = this.options;
    if (table.config.log.level !== old.table.config.log.level) logger.level = table.config.log.level;
    for (const field of changedRestartOnlyFields(old.table.config, table.config)) {
      logger.warn({ field }, 'config reloaded, but this field changes only on restart');
    }
    // What changed, with the old and new limits (rules/diff.ts); the counts as before.
    const changes = diffRules(old.table, table);
    logger.info({ routes: table.routes.length, limiters: table.limiters.size, changes }, 'config reloaded');
    return old;
  }

  close(): Promise<void> {
    return closeState(this.#current);
  }
}
