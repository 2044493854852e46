// The manual holds to the code it describes: the front page stays a front page, every link goes
// somewhere (a file, and a heading in it), every file path, `npm run` script and setting the
// pages name exists as named. A rename that leaves a page behind fails here.
import assert from 'node:assert/strict';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { dirname, join, normalize } from 'node:path';
import { describe, it } from 'node:test';
import { SETTINGS } from '../../src/config/settings.js';

const ROOT = new URL('../../', import.meta.url).pathname;
const PAGES = [
  'README.md',
  'CHANGELOG.md',
  ...readdirSync(join(ROOT, 'docs'), { recursive: true })
    .map(String)
    .filter((f) => f.endsWith('.md'))
    .map((f) => `docs/${f}`),
];
const read = (page: string) => readFileSync(join(ROOT, page), 'utf8');
/** The text outside fenced code blocks. */
const prose = (text: string) => text.replace(/^```[\s\S]*?^```/gm, '');
/** GitHub's anchor for a heading: lower case, punctuation dropped, spaces to hyphens. */
const slug = (heading: string) =>
  heading
    .trim()
    .toLowerCase()
    .replace(/[^\p{L}\p{N}_\- ]/gu, '')
    .replace(/ /g, '-');
const anchorsOf = (page: string) =>
  new Set([...prose(read(page)).matchAll(/^#{1,6} (.+)$/gm)].map((m) => slug(m[1]!.replace(/`/g, ''))));

/** Lines as `wc -l` counts them: a last line's newline ends it, and adds none. */
const lineCount = (text: string) => text.split('\n').length - (text.endsWith('\n') ? 1 : 0);
const codeFiles = (dirs: string[]) =>
  dirs
    .flatMap((dir) => readdirSync(join(ROOT, dir), { recursive: true }).map((f) => join(dir, String(f))))
    .filter((f) => /\.(ts|mjs)$/.test(f));
/** The first fenced block after a heading, as the page writes it. */
function blockAfter(page: string, heading: string): string {
  const text = read(page);
  const at = text.indexOf(`\n${heading}\n`);
  assert.ok(at >= 0, `${page} has "${heading}"`);
  const block = /^```sh\n[\s\S]*?^```$/m.exec(text.slice(at));
  assert.ok(block, `${page}, "${heading}": a sh block`);
  return block[0];
}

/**
 * Names in capitals with an underscore look like settings (a single word, such as PATH, CI, JSON
 * or SIGTERM, is not taken for one; PORT and HOST are the only settings of one word). Those that are not settings of ours
 * are named here, each for a reason, so that a misspelt or removed setting cannot pass as one:
 * - other programs' variables: glibc's (MALLOC_ARENA_MAX), Node's and PostgreSQL's clients';
 * - OpenTelemetry's own (OTEL_ but for the three in settings.ts): the SDK reads them itself, and
 *   its documentation, which the traces guide links, describes them;
 * - the tests' and the benchmark's knobs (TEST_SEED, CHROMIUM_PATH, BENCH_SECTIONS, …): not the
 *   service's, but each must still be read by a file of test/ or scripts/ (checked below);
 * - constants of the code that a page explains (LINGER_MS, SCAN_WINDOW, …): each must still be
 *   declared in src/ (checked below).
 */
const OTHER_PROGRAMS = new Set(['MALLOC_ARENA_MAX', 'NODE_OPTIONS', 'NODE_ENV', 'PGPASSWORD', 'PGHOST', 'PGUSER']);
const OPENTELEMETRY = /^OTEL_\w+$/;
const KNOB_PREFIXES = /^(TEST|BENCH|STATES)_|^(CHROMIUM_PATH|SYSTEM_NODE)$/;

describe('the manual', () => {
  it('has a front page of at most 300 lines, and a performance report of at most 400', () => {
    assert.ok(lineCount(read('README.md')) <= 300, `README.md has ${lineCount(read('README.md'))} lines`);
    const performance = lineCount(read('docs/performance.md'));
    assert.ok(performance <= 400, `docs/performance.md has ${performance} lines`);
  });

  it('links only to files that exist, and to headings they have', () => {
    const broken: string[] = [];
    for (const page of PAGES) {
      for (const [, target] of prose(read(page)).matchAll(/\]\(([^)\s]+)\)/g)) {
        if (/^[a-z]+:/.test(target!)) continue;
        const [file, anchor] = target!.split('#') as [string, string | undefined];
        const to = file === '' ? page : normalize(join(dirname(page), file));
        if (!existsSync(join(ROOT, to))) broken.push(`${page}: ${target} (no file ${to})`);
        else if (anchor && to.endsWith('.md') && !anchorsOf(to).has(anchor))
          broken.push(`${page}: ${target} (no heading)`);
      }
    }
    assert.deepEqual(broken, []);
  });

  it('names only files that exist', () => {
    const wrong: string[] = [];
    for (const page of PAGES.filter((p) => p !== 'CHANGELOG.md')) {
      const text = read(page);
      for (const [, path] of text.matchAll(
        /`((?:src|test|scripts|deploy|openapi|docs|packages|\.ci)\/[\w./-]+|\.[\w-]+\.(?:cjs|yaml|json))`/g,
      )) {
        // The walk-through of adding a resource (docs/explanations/architecture.md) names the files it makes.
        if (!existsSync(join(ROOT, path!)) && !/\bnotes?(\.test)?\.ts$/.test(path!)) wrong.push(`${page}: ${path}`);
      }
    }
    assert.deepEqual(wrong, []);
  });

  it('names only npm scripts that exist', () => {
    const scripts = Object.keys((JSON.parse(read('package.json')) as { scripts: object }).scripts);
    const wrong: string[] = [];
    for (const page of PAGES.filter((p) => p !== 'CHANGELOG.md')) {
      for (const [, script] of read(page).matchAll(/npm run ([\w:-]+)/g)) {
        if (!scripts.includes(script!)) wrong.push(`${page}: npm run ${script}`);
      }
    }
    assert.deepEqual(wrong, []);
  });

  it('names as a setting only a setting of src/config/settings.ts', () => {
    const settings = new Set(Object.values(SETTINGS).map((s) => s.env));
    const knobs = codeFiles(['test', 'scripts']).map(read).join('\n');
    const constants = codeFiles(['src']).map(read).join('\n');
    const wrong: string[] = [];
    for (const page of PAGES.filter((p) => p !== 'CHANGELOG.md')) {
      for (const [, name] of read(page).matchAll(/`([A-Z][A-Z0-9]*(?:_[A-Z0-9]+)+)(?:=[^`]*)?`/g)) {
        if (settings.has(name!) || OTHER_PROGRAMS.has(name!) || OPENTELEMETRY.test(name!)) continue;
        if (KNOB_PREFIXES.test(name!)) {
          if (!new RegExp(`\\b${name}\\b`).test(knobs)) wrong.push(`${page}: ${name}, a knob no test or script reads`);
        } else if (!new RegExp(`\\bconst ${name}\\b`).test(constants)) {
          wrong.push(`${page}: ${name}, neither a setting nor a constant of src/`);
        }
      }
    }
    assert.deepEqual(wrong, []);
  });

  it("starts the tutorial with the README's quick start and first session, as the README writes them", () => {
    for (const [readme, tutorial] of [
      ['## Quick start', '## Start it'],
      ['## A first session with curl', '## A first session with curl'],
    ] as const) {
      assert.equal(blockAfter('docs/tutorial.md', tutorial), blockAfter('README.md', readme), readme);
    }
  });
});
