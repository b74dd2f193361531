import { watch, type FSWatcher } from 'node:fs';
import { basename, dirname, resolve } from 'node:path';
import type { Logger } from 'pino';
import type { RuleTable } from '../rules/compile.js';
import type { GatewayConfig } from '../config/schema.js';
import { certificateFiles } from '../runtime/tls/certificates.js';
import { loadConfigFile } from '../rules/load.js';

export interface ReloadTarget {
  reload(table: RuleTable): Promise<void>;
  readonly metrics: { configReload(ok: boolean): void };
}

/** Loads the file again and applies it; an invalid file is logged (file:line) and the old table stays. */
export async function reloadFromFile(target: ReloadTarget, file: string, logger: Logger): Promise<boolean> {
  try {
    await target.reload(await loadConfigFile(file));
    return true;
  } catch (err) {
    target.metrics.configReload(false);
    logger.error({ err: (err as Error).message }, 'config reload failed: keeping the running config');
    return false;
  }
}

/**
 * Calls `onChange` when the config file changes. The folder is watched, not the file: editors
 * and config-map mounts replace files by renaming, which a watch on the file itself would miss.
 */
export function watchConfigFile(file: string, onChange: () => void, debounceMs = 200): FSWatcher {
  const path = resolve(file);
  const name = basename(path);
  let timer: NodeJS.Timeout | undefined;
  const watcher = watch(dirname(path), (_event, changed) => {
    if (changed !== null && changed !== name && !changed.startsWith('..')) return; // "..data": k8s config maps
    clearTimeout(timer);
    timer = setTimeout(onChange, debounceMs);
  });
  watcher.on('error', () => watcher.close()); // the folder went away: SIGHUP still reloads
  watcher.unref();
  return watcher;
}

/** The certificate files of the TLS listeners (watched like the config file). */
export function tlsFiles(config: GatewayConfig): string[] {
  return [...new Set(config.listeners.flatMap((l) => (l.tls ? certificateFiles(l.tls) : [])))];
}

/** Watches each file as watchConfigFile does; one call of `onChange` for a burst of changes across them. */
export function watchFiles(files: readonly string[], onChange: () => void, debounceMs = 200): FSWatcher[] {
  let timer: NodeJS.Timeout | undefined;
  const debounced = () => {
    clearTimeout(timer);
    timer = setTimeout(onChange, debounceMs);
  };
  return files.map((file) => watchConfigFile(file, debounced, 0));
}
