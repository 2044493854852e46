// The first start of a new store, as a newcomer makes it: its port may be taken. The first token
// is generated only once the server listens, so a start that fails shows none (and, on SQLite,
// leaves no store behind), and the next start shows one that works, on stderr only; a restart
// shows none.
import assert from 'node:assert/strict';
import { mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { createServer, type Server } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { runCli } from '../support/cli.js';
import { postPlant } from '../support/http.js';
import { startServer, type ServerProcess } from '../support/server.js';
import { createTestStore, stores, suiteOptions, type TestStore } from '../support/stores.js';

const TOKEN = /pst_[A-Za-z0-9_-]{43}/;

/** A port of 127.0.0.1 this test holds, as another program would. */
async function holdPort(): Promise<{ port: number; release: () => Promise<void> }> {
  const holder: Server = createServer().listen(0, '127.0.0.1');
  await new Promise((r) => holder.once('listening', r));
  const { port } = holder.address() as { port: number };
  return { port, release: () => new Promise((r) => holder.close(() => r())) };
}

/** The token the server printed on stderr, waited for (stderr and the log on stdout are separate pipes). */
async function printedToken(server: ServerProcess): Promise<string> {
  for (let i = 0; i < 100 && !TOKEN.test(server.stderr.join('\n')); i++) await sleep(25);
  const printed = [...new Set(server.stderr.join('\n').match(new RegExp(TOKEN, 'g')))];
  assert.equal(printed.length, 1, server.stderr.join('\n'));
  return printed[0]!;
}

for (const kind of stores) {
  describe(`a first start whose port is taken [${kind}]`, suiteOptions(kind), () => {
    const dir = mkdtempSync(join(tmpdir(), 'plant-store-first-start-'));
    const dropped: TestStore[] = [];
    let server: ServerProcess | undefined;
    after(async () => {
      await server?.dispose();
      await Promise.all(dropped.map((s) => s.drop()));
      rmSync(dir, { recursive: true, force: true });
    });

    it('fails showing no token; the next start, with the port free, shows one that works', async () => {
      // SQLite: the default DATABASE_URL, in a directory of its own, as in the quick start.
      const postgres = kind === 'postgres' ? createTestStore(kind) : undefined;
      if (postgres) dropped.push(postgres);
      const env = { DATABASE_URL: postgres?.databaseUrl, PLANT_STORE_TOKEN: undefined };
      const held = await holdPort();
      const args = ['serve', '--port', String(held.port), '--host', '127.0.0.1'];
      const failed = runCli(args, env, undefined, dir);
      await held.release();
      assert.equal(failed.status, 1, failed.stderr);
      assert.match(failed.stderr, /^plant-store: listen EADDRINUSE[^\n]*\n$/);
      // The one line says it all: no warning of work the failed start had under way (a prune of the
      // change log on a pool already ended, with its stack).
      const warnings = failed.stdout
        .split('\n')
        .filter((l) => l.startsWith('{') && (JSON.parse(l) as { level: number }).level >= 40);
      assert.deepEqual(warnings, []);
      assert.doesNotMatch(failed.stderr + failed.stdout, TOKEN, 'a token was shown by a start that failed');
      if (!postgres) assert.deepEqual(readdirSync(dir), [], 'the failed start left its new store behind');

      const databaseUrl = postgres?.databaseUrl ?? 'sqlite:./data/plant-store.db';
      server = await startServer({ databaseUrl, cwd: dir, port: held.port, env: { PLANT_STORE_TOKEN: undefined } });
      const token = await printedToken(server);
      assert.match(server.stderr.join('\n'), new RegExp(`http://localhost:${held.port}/plants`));
      assert.ok(!server.stdout.join('\n').includes(token), 'the token is in the stdout log');
      assert.equal((await postPlant(server.url, token, '{"id":1,"name":"first"}')).status, 200);
      // The helper's own token was never registered.
      assert.equal((await postPlant(server.url, server.token, '{"id":2,"name":"x"}')).status, 401);
      assert.equal(await server.stop(), 0);

      // A restart shows no token, and the one shown first still works.
      server = await startServer({ databaseUrl, cwd: dir, env: { PLANT_STORE_TOKEN: undefined } });
      assert.equal((await postPlant(server.url, token, '{"id":3,"name":"second"}')).status, 200);
      // Once it has exited, everything it wrote has been read.
      assert.equal(await server.stop(), 0);
      assert.doesNotMatch(server.stderr.join('\n'), TOKEN, 'a restart showed a token');
    });
  });
}
