import type { WindowRequest, WindowResult, WindowStore } from '../../src/store/window-store.js';

/**
 * The real store, with a count of the requests that have reached it (answered or not yet): a
 * test waits on `asked` to know a request is past routing and waiting on the store.
 */
export class CountingStore implements WindowStore {
  asked = 0;

  constructor(private readonly inner: WindowStore) {}

  hit(windows: readonly WindowRequest[]): Promise<WindowResult[]> {
    this.asked++;
    return this.inner.hit(windows);
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
