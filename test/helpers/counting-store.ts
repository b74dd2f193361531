import { WrappingStore, type WindowRequest, type WindowResult } from '../../src/store/window-store.js';

/**
 * The real store, with a count of the requests that have reached it (answered or not yet): a
 * test waits on `asked` to know a request is past routing and waiting on the store.
 */
export class CountingStore extends WrappingStore {
  asked = 0;

  hit(windows: readonly WindowRequest[]): Promise<WindowResult[]> {
    this.asked++;
    return this.inner.hit(windows);
  }
}
