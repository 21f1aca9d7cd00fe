import { existsSync } from 'node:fs';
import { chromium } from 'playwright-core';

/** Debian's Chromium (installed by .ci/run with apt-get; never a downloaded browser). */
export const CHROMIUM = '/usr/bin/chromium';

/**
 * The flags every browser test uses: headless as root, and nothing that reaches out to the
 * network (this machine's network is closed; background services would only fail noisily).
 */
export const CHROMIUM_ARGS = [
  '--headless',
  '--no-sandbox',
  '--disable-gpu',
  '--disable-quic',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
];

/** Without Chromium, browser tests are skipped locally; with CI=true they run (and fail). */
export const chromiumRunnable = existsSync(CHROMIUM) || process.env.CI === 'true';

/** A fresh persistent context in `profileDir` (a new, empty --user-data-dir). */
export function launchChromium(profileDir: string) {
  return chromium.launchPersistentContext(profileDir, { executablePath: CHROMIUM, headless: true, args: CHROMIUM_ARGS });
}
