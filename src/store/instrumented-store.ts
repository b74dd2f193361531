import type { GatewayMetrics } from '../metrics/gateway-metrics.js';
import type { WindowRequest, WindowResult, WindowStore } from './window-store.js';

/** Measures each round trip of the store it wraps, and counts its failures. */
export class InstrumentedStore implements WindowStore {
  constructor(
    private readonly inner: WindowStore,
    private readonly metrics: GatewayMetrics,
  ) {}

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

  connect(): Promise<boolean> {
    return this.inner.connect();
  }

  ready(): Promise<boolean> {
    return this.inner.ready();
  }

  close(): Promise<void> {
    return this.inner.close();
  }
}
