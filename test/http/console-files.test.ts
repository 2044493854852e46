// GET /console and its files, as served: the page and the built files it refers to (from the
// package's dist/console, which `npm run build` makes), under the CSP that PRODUCT.md §7 asks
// for. The console's behaviour is test/browser/console.test.ts. SQLite only: no store is read.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { useTestApp } from '../helper.js';

describe('GET /console and its files', () => {
  const t = useTestApp();

  it('serves the page with a CSP of this server only, nothing inline, never framed', async () => {
    const page = await t.app.inject({ path: '/console' });
    assert.equal(page.status, 200);
    assert.match(String(page.headers['content-type']), /^text\/html/);
    const csp = String(page.headers['content-security-policy']);
    assert.match(csp, /^default-src 'self'(;|$)/);
    assert.match(csp, /frame-ancestors 'none'/);
    assert.doesNotMatch(csp, /unsafe-|\*|https?:|data:/);
    assert.equal(page.headers['x-content-type-options'], 'nosniff');
    // Every file the page loads is one of its own, named relatively (a path prefix is kept).
    const refs = [...page.text.matchAll(/(?:src|href)="([^"]+)"/g)].map((m) => m[1]!);
    assert.deepEqual(refs.sort(), ['console/console.css', 'console/console.js', 'console/icon.svg']);
    assert.doesNotMatch(page.text, /<script>|<style|style=|\son[a-z]+=/i, 'no inline script, style or handler');
  });

  it('serves the built script, style sheet and icon with their types, and nothing else', async () => {
    for (const [file, type] of [
      ['console.js', /^text\/javascript/],
      ['console.css', /^text\/css/],
      ['icon.svg', /^image\/svg\+xml/],
    ] as const) {
      const r = await t.app.inject({ path: `/console/${file}` });
      assert.equal(r.status, 200, file);
      assert.match(String(r.headers['content-type']), type, file);
      assert.ok(r.text.length > 100, `${file} is built`);
    }
    for (const file of ['index.html', 'nothing.js', 'console.js.map'])
      assert.equal((await t.app.inject({ path: `/console/${file}` })).status, 404, file);
    assert.equal((await t.app.inject({ path: '/console/..%2Fpackage.json' })).status, 400);
  });
});
