// Part of `npm run build`: the console (GET /console) from console/ into dist/console/, which the
// package ships and src/http/routes/console.ts serves. esbuild bundles its TypeScript, and the
// client's modules it imports, into one script: no inline code, so the page runs under a CSP
// without 'unsafe-inline'. esbuild does not check types; `tsc -p console` does, just before.
import { copyFileSync, mkdirSync } from 'node:fs';
import { build } from 'esbuild';

const from = (name) => new URL(`../console/${name}`, import.meta.url).pathname;
const out = new URL('../dist/console/', import.meta.url).pathname;

mkdirSync(out, { recursive: true });
await build({
  entryPoints: [from('src/main.ts')],
  outfile: `${out}console.js`,
  bundle: true,
  format: 'iife',
  target: 'es2022',
  minify: true,
  legalComments: 'none',
  logLevel: 'warning',
});
for (const file of ['index.html', 'console.css', 'icon.svg']) copyFileSync(from(file), `${out}${file}`);
