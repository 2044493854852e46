// Debian's Chromium for the browser tests (`apt-get install -y chromium`, which .ci/run does), or
// the browser CHROMIUM_PATH names: playwright-core drives it and never downloads one of its own.
import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { it } from 'node:test';
import { chromium, type BrowserContext } from 'playwright-core';

export const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';
const missing = !existsSync(CHROMIUM);

/** The describe option: skipped without Chromium, unless CI=true, where that is a failure. */
export const skipWithoutChromium =
  missing && process.env.CI !== 'true'
    ? `${CHROMIUM} is not installed (apt-get install -y chromium); with CI=true this test fails instead`
    : false;

/** Inside the describe: without Chromium (so with CI=true), one failing test; true then. */
export function failWithoutChromium(): boolean {
  if (missing) it('has Chromium to run in', () => assert.fail(`${CHROMIUM} is not installed: .ci/run installs it`));
  return missing;
}

/** A headless Chromium with a profile of its own, removed again by `close`. */
export async function launchChromium(): Promise<{ context: BrowserContext; close(): Promise<void> }> {
  const profile = mkdtempSync(join(tmpdir(), 'plant-store-chromium-'));
  const context = await chromium.launchPersistentContext(profile, {
    executablePath: CHROMIUM,
    headless: true,
    args: ['--no-sandbox', '--disable-gpu', '--disable-background-networking', '--no-first-run'],
  });
  return {
    context,
    close: async () => {
      await context.close();
      rmSync(profile, { recursive: true, force: true });
    },
  };
}
