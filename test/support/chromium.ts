// Chromium for the browser tests: Debian's (`apt-get install -y chromium`, which .ci/run does), or
// the browser that CHROMIUM_PATH names. playwright-core drives it and never downloads one of its own.
import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { it } from 'node:test';
import { chromium, type BrowserContext, type Page } from 'playwright-core';

export const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';
export const chromiumMissing = !existsSync(CHROMIUM);
/** The `skip` of a browser suite: skipped without Chromium, unless CI=true, where that fails. */
export const skipWithoutChromium =
  chromiumMissing && process.env.CI !== 'true'
    ? `${CHROMIUM} is not installed (apt-get install -y chromium); with CI=true this test fails instead`
    : false;

/** Inside a browser suite, first: with CI=true and no Chromium, one failing test, and true (add no others). */
export function failWithoutChromium(): boolean {
  if (chromiumMissing)
    it('has Chromium to run in', () => assert.fail(`${CHROMIUM} is not installed: .ci/run installs it`));
  return chromiumMissing;
}

export interface Browser {
  context: BrowserContext;
  page: Page;
  close(): Promise<void>;
}

/** Headless Chromium with a profile of its own, removed on close; its first page. */
export async function launchChromium(options: { viewport?: { width: number; height: number } } = {}): Promise<Browser> {
  const profile = mkdtempSync(join(tmpdir(), 'plant-store-chromium-'));
  const removeProfile = () => rmSync(profile, { recursive: true, force: true });
  const context = await chromium
    .launchPersistentContext(profile, {
      executablePath: CHROMIUM,
      headless: true,
      args: [
        '--no-sandbox',
        '--disable-gpu',
        '--disable-background-networking',
        '--disable-component-update',
        '--disable-sync',
        '--no-first-run',
      ],
      ...(options.viewport && { viewport: options.viewport }),
    })
    .catch((err: unknown) => {
      removeProfile();
      throw err;
    });
  const page = context.pages()[0] ?? (await context.newPage());
  return {
    context,
    page,
    async close() {
      await context.close();
      removeProfile();
    },
  };
}
