import type { Page } from 'playwright-core';

/** Authorize on the /docs page: paste the token into the bearer scheme's dialog, and close it. */
export async function authorize(page: Page, token: string): Promise<void> {
  await page.click('button.authorize');
  const dialog = page.locator('.modal-ux');
  await dialog.locator('input').fill(token);
  await dialog.locator('button.authorize').click();
  await dialog.locator('button.btn-done').click();
}
