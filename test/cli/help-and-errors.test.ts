// What a command says about itself and about what went wrong: every --help names DATABASE_URL
// and its default, required options are marked so, and every failure, commander's usage errors
// and pg's TLS refusals included, is one line in one style: `plant-store: <what>`.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { BACKUP_RECORDS } from '../../src/use-cases/backup-records/registry.js';
import { cli, runCli } from '../support/cli.js';
import { POSTGRES_URL, suiteOptions } from '../support/stores.js';

/** The commands `--help` lists under "Commands:", by their names. */
async function commandsOf(args: string[]): Promise<string[]> {
  const help = (await cli([...args, '--help'])).stdout;
  const section = help.split(/^Commands:\n/m)[1]?.split(/\n\n/)[0] ?? '';
  return section
    .split('\n')
    .map((line) => /^ {2}(\w[\w-]*)/.exec(line)?.[1])
    .filter((name): name is string => name !== undefined && name !== 'help');
}

describe('--help', () => {
  it('names DATABASE_URL and its default, for the program and for every command', async () => {
    const commands: string[][] = [[]];
    for (const name of await commandsOf([])) {
      commands.push([name]);
      for (const sub of await commandsOf([name])) commands.push([name, sub]);
    }
    assert.ok(commands.length > 12, `found only ${commands.map((c) => c.join(' ')).join(', ')}`);
    for (const args of commands) {
      const r = await cli([...args, '--help']);
      assert.equal(r.status, 0, `${args.join(' ')}: ${r.stderr}`);
      assert.match(r.stdout, /DATABASE_URL {2}the store: /, args.join(' '));
      assert.match(r.stdout, /default: sqlite:\.\/data\/plant-store\.db/, args.join(' '));
    }
  });

  it('marks the options a command requires', async () => {
    const r = await cli(['token', 'create', '--help']);
    assert.match(r.stdout, /--name <name> +what the token is for \(required\)/);
    assert.doesNotMatch(r.stdout, /--scope[^\n]*\(required\)/);
  });

  it('says what a backup holds as the registry of record kinds has it', async () => {
    const r = await cli(['backup', '--help']);
    const held = /write the whole store \(([^)]*)\)/.exec(r.stdout.replace(/\s+/g, ' '))?.[1];
    assert.deepEqual(held?.split(', ').sort(), BACKUP_RECORDS.map((k) => `${k.noun}s`).sort());
  });
});

describe('usage errors', () => {
  for (const [what, args, says] of [
    [
      'a missing required option',
      ['token', 'create'],
      /^plant-store: required option '--name <name>' not specified\n$/,
    ],
    [
      'an unknown command, with its suggestion',
      ['tokn', 'list'],
      /^plant-store: unknown command 'tokn' \(Did you mean token\?\)\n$/,
    ],
    ['an unknown option', ['token', 'list', '--bogus'], /^plant-store: unknown option '--bogus'\n$/],
    ['an argument too many', ['export', 'extra'], /^plant-store: too many arguments for 'export'[^\n]*\n$/],
    [
      // The argument is quoted back as its characters' escapes: a newline cannot split the line,
      // nor a terminal's escape sequence colour or move it.
      'an argument with a newline and an escape sequence in it',
      ['webhook', 'test', 'ep_1\n\u001b[2Jep_2\u2028'],
      /^plant-store: "ep_1\\n\\u001b\[2Jep_2\\u2028" is not an endpoint id [^\n]*\n$/,
    ],
    [
      // Quoted back in part: 100,000 characters made a line of 100,000.
      'an argument of 100,000 characters',
      // The cut falls between the halves of a 🌿 (after the quote, each takes two): before it.
      ['webhook', 'test', '🌿'.repeat(50_000)],
      /^plant-store: "(🌿){499}… \(99[0-9]{3} more characters\)\n$/u,
    ],
  ] as const) {
    it(`${what} is one line in the style of every failure`, async () => {
      const r = await cli([...args]);
      assert.equal(r.status, 1);
      assert.equal(r.stdout, '');
      assert.match(r.stderr, says);
    });
  }
});

describe('sslmode=require against a PostgreSQL server', suiteOptions('postgres'), () => {
  // The test server has no TLS: the command fails. Were it to have TLS, it would find no store
  // (the database's search_path holds none): one line either way, and never pg's 8-line warning.
  for (const args of [
    ['token', 'list'],
    ['serve', '--port', '0'],
  ]) {
    it(`plant-store ${args.join(' ')}: one line, no warning from pg before it`, () => {
      const url = new URL(POSTGRES_URL);
      url.searchParams.set('sslmode', 'require');
      url.searchParams.set('schema', 'plant_store_no_such_schema');
      const r = runCli(args, { DATABASE_URL: url.href, PORT: '0' });
      assert.equal(r.status, 1, r.stdout);
      assert.match(r.stderr, /^plant-store: [^\n]+\n$/);
      assert.doesNotMatch(r.stderr, /WARNING/i);
    });
  }
});
