// What the console's browser tests share: a tab of the console watched for console errors (a CSP
// violation is one) and for what it fetched, signing in, the plants table as a user reads it, and
// axe-core's verdict on the page.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import type { BrowserContext, Page, Response } from 'playwright-core';
import { checkResponse } from '../support/conformance.js';
import { rawResponse } from '../support/http.js';

export interface ConsoleTab {
  page: Page;
  /** Console errors and page errors: a CSP violation is reported as one. */
  errors: string[];
  /** Every URL the tab fetched. */
  requested: string[];
  /** Each answer's disagreements with the document, checked as it arrives (a reload drops bodies). */
  checked: Promise<string[]>[];
}

/** What a tab received, held to the document: every answer (a stream's status and headers). */
async function conformance(response: Response): Promise<string[]> {
  const url = new URL(response.url());
  const headers = await response.allHeaders();
  const stream = headers['content-type']?.startsWith('text/event-stream') === true;
  // Chromium keeps no body of a 204 or 304 (nor a stream's, which never ends): those are ''.
  const empty = stream || response.status() === 204 || response.status() === 304;
  const text = empty ? '' : await response.text();
  const raw = rawResponse(response.status(), headers, text);
  return checkResponse(response.request().method(), url.pathname, raw).map((p) => `${url.pathname}: ${p}`);
}

/** A new tab of `context` at the console (`page`: that tab instead), watched from its first request. */
export async function openConsole(context: BrowserContext, url: string, page?: Page): Promise<ConsoleTab> {
  const tab: ConsoleTab = { page: page ?? (await context.newPage()), errors: [], requested: [], checked: [] };
  tab.page.setDefaultTimeout(10_000);
  tab.page.on('console', (m) => m.type() === 'error' && tab.errors.push(m.text()));
  tab.page.on('pageerror', (e) => tab.errors.push(String(e)));
  tab.page.on('request', (r) => tab.requested.push(r.url()));
  // An answer still arriving when the tab or browser closes has no body left to read, nor has one
  // the page dropped (EventSource drops the body of a stream it was refused, a 410 the console then
  // relists after): that is no disagreement, and must not reject after the test (an unhandled
  // rejection fails the run). The feed's refusals are held to the document by test/http/.
  const gone = /Target page, context or browser has been closed|No data found for resource with given identifier/;
  tab.page.on('response', (r) =>
    tab.checked.push(
      conformance(r).catch((err: unknown) => (gone.test(String(err)) ? [] : [`${r.url()}: ${String(err)}`])),
    ),
  );
  await tab.page.goto(new URL('/console', url).href);
  return tab;
}

/** The tab broke no CSP rule, loaded nothing from elsewhere and got only answers the document declares. */
export async function assertCleanTab(tab: ConsoleTab, origin: string, allowedErrors?: RegExp): Promise<void> {
  // Chromium logs every 4xx a fetch receives; the console answers those itself (a refused token, a conflict).
  const handled = /^Failed to load resource: the server responded with a status of 4\d\d/;
  assert.deepEqual(
    tab.errors.filter((e) => !handled.test(e) && !allowedErrors?.test(e)),
    [],
  );
  assert.deepEqual(
    tab.requested.filter((u) => new URL(u).origin !== origin),
    [],
  );
  assert.ok(tab.checked.length > 0);
  assert.deepEqual((await Promise.all(tab.checked)).flat(), []);
}

export async function signIn(page: Page, token: string): Promise<void> {
  await page.getByLabel('API token').fill(token);
  await page.getByRole('button', { name: 'Sign in' }).click();
  await page.getByRole('heading', { name: 'Plants' }).waitFor();
}

export const plantsTable = (page: Page) => page.getByRole('table', { name: 'Plants' });
export const rowOf = (page: Page, text: string) => plantsTable(page).getByRole('row').filter({ hasText: text });

/** The ids the table shows, in its order (the first cell of each row but the header's). */
export async function idsShown(page: Page): Promise<string[]> {
  const rows = await plantsTable(page).getByRole('row').allInnerTexts();
  return rows.slice(1).map((r) => r.trim().split(/\s+/)[0]!);
}

/**
 * Waits until the table shows exactly these ids (a page loads, a live change lands): 30 s by
 * default, as a page that lists in a second alone took over 10 s once beside the suite's other
 * processes on a 2-core machine.
 */
export async function waitForIds(page: Page, ids: (number | string)[], timeoutMs = 30_000): Promise<void> {
  const want = ids.map(String);
  const until = Date.now() + timeoutMs;
  let shown: string[] = [];
  while (Date.now() < until) {
    shown = await idsShown(page);
    if (shown.join() === want.join()) return;
    await new Promise((r) => setTimeout(r, 50));
  }
  assert.deepEqual(shown, want);
}

const AXE = readFileSync(createRequire(import.meta.url).resolve('axe-core/axe.min.js'), 'utf8');

/**
 * axe-core's serious and critical violations on the page as it is. Its source is evaluated
 * through the DevTools protocol, which the page's CSP does not govern (a script tag would be
 * refused, as it should be).
 */
export async function seriousViolations(page: Page): Promise<string[]> {
  await page.evaluate(AXE);
  const violations = await page.evaluate(async () => {
    const axe = (
      globalThis as unknown as {
        axe: { run(): Promise<{ violations: { id: string; impact: string; nodes: { target: string[] }[] }[] }> };
      }
    ).axe;
    return (await axe.run()).violations;
  });
  return violations
    .filter((v) => v.impact === 'serious' || v.impact === 'critical')
    .map((v) => `${v.id} (${v.impact}): ${v.nodes.map((n) => n.target.join(' ')).join(', ')}`);
}

/**
 * From now on, records in the page when each row is marked (`data-change`: created, updated,
 * deleted), by the page's clock, which is this machine's as the test's: how long a change took
 * to show, without the time the test's own polling adds on a busy machine.
 */
export async function watchMarks(page: Page): Promise<void> {
  await page.evaluate(`
    window.marks = [];
    new MutationObserver((records) => {
      for (const { target } of records)
        if (target.dataset.change) window.marks.push({ text: target.textContent, change: target.dataset.change, at: Date.now() });
    }).observe(document.body, { subtree: true, attributes: true, attributeFilter: ['data-change'] });
  `);
}

/** When the page marked a row holding `text` as `change`, at `since` or later (waits up to 5 s). */
export async function markedAt(page: Page, text: string, change: string, since: number): Promise<number> {
  // Asked from here: waitForFunction's string would be eval'd in the page, which its CSP refuses.
  const find = `window.marks.find((m) => m.text.includes(${JSON.stringify(text)}) && m.change === '${change}' && m.at >= ${since})?.at`;
  for (const until = Date.now() + 5000; Date.now() < until; await new Promise((r) => setTimeout(r, 25))) {
    const at = await page.evaluate<number | undefined>(find);
    if (at !== undefined) return at;
  }
  assert.fail(`no row holding ${text} was marked ${change}`);
}
