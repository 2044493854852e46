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

/**
 * Names in capitals that are not settings of ours: other programs' variables, the bench's and
 * the tests' own knobs, and OpenTelemetry's standard variables the SDK reads itself.
 */
const NOT_SETTINGS =
  /^(PATH|CI|HOME|TOKEN|NODE_\w+|PG\w+|MALLOC_ARENA_MAX|BENCH_\w+|TEST_\w+|STATES_\w+|OTEL_(?!EXPORTER_OTLP_ENDPOINT$|EXPORTER_OTLP_TRACES_ENDPOINT$|SDK_DISABLED$)\w+|STORES|DEBIAN_\w+|SIGTERM|SIGKILL|SIGINT|SIGHUP|JSON|HTTP|HTTPS|UTF|ETAG|CORS|SQLITE|FULL|NORMAL|WAL|EXCLUSIVE|IMMEDIATE|MEMORY|NOTIFY|LISTEN|TRUNCATE|RESTART|SELECT|INSERT|UPDATE|DELETE|BEGIN|COMMIT|ROLLBACK|CREATE|ALTER|DROP|LOCK|SHARE|GET|POST|PUT|PATCH|HEAD|OPTIONS|CONNECT|TRACE|EADDRINUSE|EBADENGINE|EACCES|ENOSPC|EIO|EPIPE|EAGAIN|ECONNREFUSED|ECONNRESET|ETIMEDOUT|ENOTFOUND|UNIQUE|NULL|TEXT|INTEGER|STRICT|REPLICATION|LOGIN|SUPERUSER|USER|HOSTNAME|LANG|TZ|TERM|SHELL|PWD|OLDPWD|XDG_\w+|COLUMNS|LINES|SSL\w*|TLS\w*|PID|TTY)$/;

describe('the manual', () => {
  it('has a front page of at most 300 lines, and a performance report of at most 400', () => {
    assert.ok(read('README.md').split('\n').length <= 300, 'README.md');
    assert.ok(read('docs/performance.md').split('\n').length <= 400, 'docs/performance.md');
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

  it('names only files, npm scripts, settings and constants that exist', () => {
    const scripts = Object.keys((JSON.parse(read('package.json')) as { scripts: object }).scripts);
    const settings = new Set(Object.values(SETTINGS).map((s) => s.env));
    // A name in capitals that is not a setting is a constant of the code, or a variable the tests
    // and scripts read (CHROMIUM_PATH): it must be there, as named.
    const code = ['src', 'test', 'scripts']
      .flatMap((dir) => readdirSync(join(ROOT, dir), { recursive: true }).map((f) => join(dir, String(f))))
      .filter((f) => /\.(ts|mjs)$/.test(f))
      .map(read)
      .join('\n');
    const wrong: string[] = [];
    for (const page of PAGES.filter((p) => p !== 'CHANGELOG.md')) {
      const text = read(page);
      for (const [, path] of text.matchAll(/`((?:src|test|scripts|deploy|openapi|docs|packages)\/[\w./-]+)`/g)) {
        // The walk-through of adding a resource (docs/explanations/architecture.md) names the files it makes.
        if (!existsSync(join(ROOT, path!)) && !/\bnotes?(\.test)?\.ts$/.test(path!))
          wrong.push(`${page}: file ${path}`);
      }
      for (const [, script] of text.matchAll(/npm run ([\w:-]+)/g)) {
        if (!scripts.includes(script!)) wrong.push(`${page}: npm run ${script}`);
      }
      for (const [, name] of text.matchAll(/`([A-Z][A-Z0-9_]{3,})(?:=[^`]*)?`/g)) {
        if (settings.has(name!) || NOT_SETTINGS.test(name!)) continue;
        if (!new RegExp(`\\b${name}\\b`).test(code)) wrong.push(`${page}: ${name}, neither a setting nor in the code`);
      }
    }
    assert.deepEqual(wrong, []);
  });
});
