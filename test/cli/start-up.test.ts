// A plant-store command is a process of its own for one task: it loads what that task needs, not
// the server's modules (Fastify, logs, metrics, JWT checks, webhook delivery) nor the validator
// unless it reads plants from a file. Each of those costs a command tens of milliseconds of start,
// and the tests start hundreds of commands. The modules a command loads are listed by a
// resolve hook preloaded with --import. The server loads what serving needs, but not undici,
// which an ES module import of node:http would pull in (docs/performance.md, start-up).
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import module from 'node:module';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { runCli } from '../support/cli.js';
import { startServer, type ServerProcess } from '../support/server.js';

const SERVING = ['fastify', 'pino', 'prom-client', 'jose', 'ioredis'];

// module.registerHooks: Node 22.15 and later (the supported 22.14 lacks it).
const skip =
  typeof (module as { registerHooks?: unknown }).registerHooks === 'function'
    ? false
    : `Node ${process.version} has no module.registerHooks (22.15 and later do)`;

describe('what a command loads', { skip }, () => {
  const dir = mkdtempSync(join(tmpdir(), 'plant-store-start-up-'));
  after(() => rmSync(dir, { recursive: true, force: true }));
  const hook = join(dir, 'record-loads.mjs');
  writeFileSync(
    hook,
    `import { registerHooks } from 'node:module';
import { appendFileSync } from 'node:fs';
registerHooks({
  resolve(specifier, context, next) {
    const resolved = next(specifier, context);
    appendFileSync(process.env.LOADS_FILE, resolved.url + '\\n');
    return resolved;
  },
});
`,
  );
  const env = { DATABASE_URL: `sqlite:${join(dir, 'store.db')}` };
  // The commands below work on a store that exists: they create none.
  before(() => assert.equal(runCli(['migrate'], env).status, 0));

  /** The packages under node_modules that `plant-store <args>` loaded. */
  const packagesLoadedBy = (args: string[], input?: string): Set<string> => {
    const loads = join(dir, `${args.join('-')}.loads`);
    writeFileSync(loads, '');
    const r = runCli(args, { ...env, NODE_OPTIONS: `--import=${hook}`, LOADS_FILE: loads }, input);
    assert.equal(r.status, 0, r.stderr);
    const names = readFileSync(loads, 'utf8')
      .split('\n')
      .map((url) => /\/node_modules\/((?:@[^/]+\/)?[^/]+)\//.exec(url)?.[1])
      .filter((name) => name !== undefined);
    return new Set(names);
  };

  it('token create and token list load none of the server modules, nor the validator', () => {
    for (const args of [
      ['token', 'create', '--name', 'start-up'],
      ['token', 'list'],
    ]) {
      const loaded = packagesLoadedBy(args);
      assert.ok(loaded.has('better-sqlite3'), `${args.join(' ')} did not open the store`);
      assert.deepEqual(
        [...loaded].filter((name) => SERVING.includes(name) || name === 'ajv'),
        [],
        args.join(' '),
      );
    }
  });

  it('import loads the validator (the API rules apply to every line), and still none of the server modules', () => {
    const loaded = packagesLoadedBy(['import'], '{"id":1,"name":"Monstera"}\n');
    assert.ok(loaded.has('ajv'));
    assert.deepEqual(
      [...loaded].filter((name) => SERVING.includes(name)),
      [],
    );
  });
});

describe('what the server loads to start', () => {
  const dir = mkdtempSync(join(tmpdir(), 'plant-store-serve-loads-'));
  let server: ServerProcess | undefined;
  after(async () => {
    await server?.dispose();
    rmSync(dir, { recursive: true, force: true });
  });

  it("never loads undici, the engine of fetch: an ESM import of node:http would, through the facade's WebSocket getter", async () => {
    // Node's own modules are not resolved through hooks; its list of loaded internals is what tells.
    const report = join(dir, 'report.mjs');
    writeFileSync(
      report,
      `process.on('exit', () => process.stderr.write('internals loaded: ' + JSON.stringify(process.moduleLoadList.filter((m) => m.includes('undici'))) + '\\n'));\n`,
    );
    server = await startServer({ env: { NODE_OPTIONS: `--import=${report}` } });
    assert.equal(await server.stop(), 0);
    const line = server.stderr.find((l) => l.startsWith('internals loaded: '));
    assert.ok(line, `no report on exit:\n${server.stderr.join('\n')}`);
    assert.deepEqual(JSON.parse(line.slice('internals loaded: '.length)), []);
  });
});
