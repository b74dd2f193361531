import type { GatewayMetrics } from '../metrics/gateway-metrics.js';
import { WrappingStore, type WindowRequest, type WindowResult, type WindowStore } from './window-store.js';

/** Measures each round trip of the store it wraps, and counts its failures. */
export class InstrumentedStore extends WrappingStore {
  constructor(
    inner: WindowStore,
    private readonly metrics: GatewayMetrics,
  ) {
    super(inner);
  }

  async hit(requests: readonly WindowRequest[]): Promise<WindowResult[]> {
    const started = performance.now();
    try {
      return await this.inner.hit(requests);
    } catch (err) {
      this.metrics.storeError();
      throw err;
    } finally {
      this.metrics.storeRoundTrip((performance.now() - started) / 1000);
    }
  }
}
