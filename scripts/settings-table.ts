// Writes the settings table of src/config/settings.ts into docs/reference/settings.md, between the
// `<!-- settings:start -->` and `<!-- settings:end -->` markers (`npm run docs:settings`).
import { readFileSync, writeFileSync } from 'node:fs';
import { settingsMarkdown } from '../src/config/docs.js';

const path = new URL('../docs/reference/settings.md', import.meta.url);
const readme = readFileSync(path, 'utf8');
const updated = readme.replace(
  /<!-- settings:start -->\n(?:[\s\S]*?\n)?<!-- settings:end -->/,
  `<!-- settings:start -->\n\n${settingsMarkdown()}\n\n<!-- settings:end -->`,
);
if (updated === readme && !readme.includes('<!-- settings:start -->')) {
  throw new Error('docs/reference/settings.md has no <!-- settings:start --> / <!-- settings:end --> markers');
}
writeFileSync(path, updated);
