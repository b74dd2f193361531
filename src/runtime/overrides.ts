/**
 * The overrides in force: the overrides file's (reloaded when it changes; a bad file keeps the
 * last good overrides) merged with the admin API's from the store (polled: one GET of a version
 * key per interval, the hash read only when it moved). The admin API's entry wins for one key.
 * Compiled into one OverrideTable on each change, which the request path reads.
 */
import { watch, type FSWatcher } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { basename, dirname, resolve } from 'node:path';
import type { Logger } from 'pino';
import { parse as parseYaml } from 'yaml';
import type { TiersConfig } from '../config/schema.js';
import type { OverridesView } from '../http/request-tier.js';
import {
  OverrideTable,
  parseOverrideAction,
  parseOverrides,
  type OverrideAction,
} from '../limits/overrides.js';
import type { SharedOverrides } from '../store/shared-overrides.js';

type OverridesConfig = TiersConfig['overrides'];

/** A file's overrides: a map of "<kind>:<value>" to an override, at the top or under `overrides:`. */
export function parseOverridesFile(text: string): { entries: Map<string, OverrideAction>; errors: string[] } {
  let raw: unknown;
  try {
    raw = parseYaml(text);
  } catch (err) {
    return { entries: new Map(), errors: [(err as Error).message] };
  }
  if (
    raw &&
    typeof raw === 'object' &&
    !Array.isArray(raw) &&
    'overrides' in raw &&
    Object.keys(raw).length === 1
  )
    raw = (raw as { overrides: unknown }).overrides;
  return parseOverrides(raw);
}

export class LiveOverrides implements OverridesView {
  #table = OverrideTable.EMPTY;
  #file = new Map<string, OverrideAction>();
  #shared = new Map<string, OverrideAction>();
  #version: string | undefined;
  #config: OverridesConfig | undefined;
  #watcher: FSWatcher | undefined;
  #poller: NodeJS.Timeout | undefined;
  #polling: Promise<void> | undefined;
  #debounce: NodeJS.Timeout | undefined;

  constructor(
    readonly shared: SharedOverrides,
    private readonly logger: Logger,
  ) {}

  current(): OverrideTable {
    return this.#table;
  }

  /** The file's and the admin API's entries, apart. */
  list(): { file: ReadonlyMap<string, OverrideAction>; api: ReadonlyMap<string, OverrideAction> } {
    return { file: this.#file, api: this.#shared };
  }

  /** Applies a config's `tiers.overrides` (at start and on reload): reads the file, (re)starts watch and poll. */
  async configure(config: OverridesConfig): Promise<void> {
    const old = this.#config;
    this.#config = config;
    if (old?.file !== config.file) {
      this.#watcher?.close();
      this.#watcher = config.file ? this.#watch(config.file) : undefined;
      if (!config.file) this.#file = new Map();
    }
    if (config.file) await this.reloadFile();
    if (old?.pollInterval !== config.pollInterval) {
      clearInterval(this.#poller);
      this.#poller = setInterval(() => void this.poll(), config.pollInterval);
      this.#poller.unref();
    }
    // Not awaited: a reload never waits on the store (the start awaits a first read: see firstRead).
    void this.poll();
    this.#compile();
  }

  /** The first read of the store's overrides, waited for at most `timeoutMs` (the store may be away). */
  async firstRead(timeoutMs: number): Promise<void> {
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<void>((resolve) => (timer = setTimeout(resolve, timeoutMs)));
    await Promise.race([this.poll(), timeout]);
    clearTimeout(timer);
  }

  /** Reads the overrides file again; a bad one is logged and the last good overrides stay. */
  async reloadFile(): Promise<boolean> {
    const file = this.#config?.file;
    if (!file) return true;
    let text: string;
    try {
      text = await readFile(file, 'utf8');
    } catch (err) {
      this.logger.error(
        { file, err: (err as Error).message },
        'overrides file unreadable: keeping the last good overrides',
      );
      return false;
    }
    const { entries, errors } = parseOverridesFile(text);
    if (errors.length > 0) {
      this.logger.error({ file, errors }, 'overrides file invalid: keeping the last good overrides');
      return false;
    }
    this.#file = entries;
    this.#compile();
    this.logger.info({ file, overrides: entries.size }, 'overrides file loaded');
    return true;
  }

  /** Asks the store whether the admin API's overrides changed, and applies them if so. */
  poll(): Promise<void> {
    this.#polling ??= this.#poll().finally(() => (this.#polling = undefined));
    return this.#polling;
  }

  async #poll(): Promise<void> {
    let snapshot;
    try {
      snapshot = await this.shared.read(this.#version);
    } catch (err) {
      this.logger.warn(
        { err: (err as Error).message },
        'overrides: the store did not answer; keeping the last ones read',
      );
      return;
    }
    if (!snapshot) return;
    const entries = new Map<string, OverrideAction>();
    for (const [key, json] of snapshot.entries) {
      let action: OverrideAction | string;
      try {
        action = parseOverrideAction(JSON.parse(json));
      } catch {
        action = 'not JSON';
      }
      if (typeof action === 'string')
        this.logger.error({ key, err: action }, 'overrides: a stored override is invalid; skipped');
      else entries.set(key, action);
    }
    // The first read of an empty store is no news: a start logs nothing for it.
    const news = this.#version !== undefined || entries.size > 0;
    this.#version = snapshot.version;
    this.#shared = entries;
    this.#compile();
    this.logger[news ? 'info' : 'debug'](
      { version: snapshot.version, overrides: entries.size },
      'overrides from the admin API applied',
    );
  }

  /** Sets one override in the store, then applies it here at once (the others within a poll). */
  async put(key: string, action: OverrideAction): Promise<void> {
    await this.shared.put(key, JSON.stringify(action));
    await this.poll();
  }

  async delete(key: string): Promise<boolean> {
    const had = await this.shared.delete(key);
    await this.poll();
    return had;
  }

  #compile(): void {
    this.#table = OverrideTable.compile(new Map([...this.#file, ...this.#shared]));
  }

  #watch(file: string): FSWatcher | undefined {
    const path = resolve(file);
    const name = basename(path);
    try {
      const watcher = watch(dirname(path), (_event, changed) => {
        if (changed !== null && changed !== name && !changed.startsWith('..')) return;
        clearTimeout(this.#debounce);
        this.#debounce = setTimeout(() => void this.reloadFile(), 100);
      });
      watcher.on('error', () => watcher.close());
      watcher.unref();
      return watcher;
    } catch (err) {
      this.logger.error(
        { file, err: (err as Error).message },
        'overrides file: cannot watch its folder (reload re-reads it)',
      );
      return undefined;
    }
  }

  async close(): Promise<void> {
    this.#watcher?.close();
    clearInterval(this.#poller);
    clearTimeout(this.#debounce);
    await this.#polling;
    await this.shared.close();
  }
}
