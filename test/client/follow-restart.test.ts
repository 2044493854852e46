// followChanges while the server process stops (SIGTERM, its long polls answered as it drains)
// and starts again on the same store and port: the follower resumes by itself, losing nothing.
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { createPlantStoreClient, followChanges, type Change } from '../../src/client/index.js';
import { startServer, type ServerProcess } from '../support/server.js';
import { FAST, logAfter, positionOf } from './follow-support.js';

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

describe('followChanges across a restart of the server process [sqlite]', () => {
  let dir: string;
  let server: ServerProcess;

  before(async () => {
    dir = mkdtempSync(join(tmpdir(), 'plant-store-follow-'));
    server = await startServer({ dataDir: dir });
  });
  after(async () => {
    await server?.dispose();
    rmSync(dir, { recursive: true, force: true });
  });

  it('resumes after SIGTERM and a start on the same port: every change once, in order', async () => {
    const port = Number(new URL(server.url).port);
    const client = createPlantStoreClient({ baseUrl: server.url, token: server.token });
    const from = await positionOf(client);
    const retried: unknown[] = [];
    const stop = new AbortController();
    const follower = followChanges({
      client,
      after: from,
      wait: 20,
      ...FAST,
      signal: stop.signal,
      onRetry: (e) => retried.push(e),
    });
    const got: Change[] = [];
    try {
      await client.POST('/plants', { body: { id: 1, name: 'Before the restart' } });
      got.push((await follower.next()).value as Change);
      // The next long poll is in flight when the server stops.
      const pending = follower.next();
      await sleep(200);
      assert.equal(await server.stop(), 0);
      await sleep(500);
      server = await startServer({ dataDir: dir, port, token: server.token });
      for (let id = 2; id <= 4; id++) await client.POST('/plants', { body: { id, name: `After the restart ${id}` } });
      got.push((await pending).value as Change);
      while (got.length < 4) got.push((await follower.next()).value as Change);
    } finally {
      stop.abort();
      await follower.return();
    }
    assert.deepEqual(got, await logAfter(client, from));
    assert.deepEqual(
      got.map((c) => c.id),
      [1, 2, 3, 4],
    );
    // While it was down, polls failed to connect and were retried.
    assert.ok(retried.length > 0);
  });
});
