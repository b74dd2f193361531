import { Simulation } from '../../src/cli/replay/simulate.js';
import type { RuleTable } from '../../src/rules/compile.js';
import { MemoryStore } from '../../src/store/memory-store.js';

/** A replay simulation counting in the gateway's own memory store (on the log's clock): the reference. */
export const gatewayStoreSimulation = (table: RuleTable): Simulation =>
  new Simulation(
    table,
    undefined,
    (now) => new MemoryStore({ maxKeys: 1000, sweepIntervalMs: 3_600_000, now }),
  );
