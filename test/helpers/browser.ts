import { existsSync } from 'node:fs';
import { chromium, type Browser } from 'playwright-core';

/** Debian's chromium (apt-get install chromium; .ci/run installs it). CHROMIUM_PATH overrides. */
export const CHROMIUM_PATH = process.env['CHROMIUM_PATH'] ?? '/usr/bin/chromium';

/**
 * A headless Chromium with a fresh profile (Playwright gives each launch a new temporary
 * user-data-dir), and nothing that talks to the network on its own. Throws, so the tests that
 * need it fail rather than skip, when the browser is not installed.
 */
export async function launchChromium(): Promise<Browser> {
  if (!existsSync(CHROMIUM_PATH)) {
    throw new Error(`no browser at ${CHROMIUM_PATH}: run "apt-get install chromium" (or set CHROMIUM_PATH)`);
  }
  return chromium.launch({
    executablePath: CHROMIUM_PATH,
    headless: true,
    timeout: 60_000,
    args: [
      '--no-sandbox',
      '--disable-gpu',
      '--disable-quic',
      '--no-first-run',
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-sync',
    ],
  });
}
