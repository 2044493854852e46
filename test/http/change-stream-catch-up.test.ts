// Streams that fall behind the hub's memory catch up without holding other requests back
// (SQLite, whose reads are synchronous): 100 streams follow tags nobody writes while 30,000
// changes go in, far more than the hub keeps in memory, so every stream walks the log window by
// window at once. The reads of the log are counted by turn of the event loop: the catch-ups read
// one window a turn between them, where each stream read its windows back to back (hundreds of
// reads in one turn, the loop held for the whole walk), or one a turn each (100 a turn). Each
// stream then gets the one change it wants, written last.
import assert from 'node:assert/strict';
import { request, type IncomingMessage } from 'node:http';
import { after, before, describe, it } from 'node:test';
import type { PlantWrite } from '../../src/domain/plant-write.js';
import { buildTestApp, type TestApp } from '../helper.js';
import { postPlant } from '../support/http.js';

const STREAMS = 100;
const CHANGES = 30_000;
const MARKER = '"name":"the marker"';

/** A stream as EventSource opens it: `opened` once its status is in; resolves with its text once MARKER has come. */
function follow(base: string, token: string, path: string, opened: () => void): Promise<string> {
  return new Promise((resolve, reject) => {
    const req = request(`${base}${path}`, {
      headers: { accept: 'text/event-stream', authorization: `Bearer ${token}` },
    });
    req.on('error', reject);
    req.on('response', (res: IncomingMessage) => {
      if (res.statusCode !== 200) return reject(new Error(`the stream answered ${res.statusCode}`));
      opened();
      let text = '';
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => {
        text += chunk;
        if (!text.includes(MARKER)) return;
        req.destroy();
        resolve(text);
      });
    });
    req.end();
  });
}

describe('streams catching up on a long log [sqlite]', () => {
  let app: TestApp;
  let base = '';
  before(async () => {
    // One principal holds at most half of the places.
    app = await buildTestApp({ store: 'sqlite', env: { CHANGES_MAX_STREAMS: String(2 * STREAMS) } });
    base = await app.listen();
  });
  after(async () => {
    await app?.close();
  });

  it('read the log one window a turn of the event loop, however many catch up at once', async () => {
    let open = 0;
    const tags = Array.from({ length: 9 }, (_, i) => `tag=nobody-${i}`).join('&');
    const streams = Array.from({ length: STREAMS }, () =>
      follow(base, app.token, `/plants/changes?${tags}&tag=marker`, () => open++),
    );
    await Promise.race([
      Promise.all(streams),
      (async () => {
        while (open < STREAMS) await new Promise((r) => setTimeout(r, 10));
      })(),
    ]);
    // Turns of the event loop, counted in its check phase; the reads of the log made in each.
    let turn = 0;
    let ticking = true;
    const tick = () => {
      turn++;
      if (ticking) setImmediate(tick);
    };
    setImmediate(tick);
    const readsInTurn = new Map<number, number>();
    const { feed } = app.services;
    const reads = feed.reads;
    feed.reads = async (atLeast) => {
      const { changes } = await reads(atLeast);
      return {
        changes: {
          ...changes,
          read: (...args: Parameters<typeof changes.read>) => {
            readsInTurn.set(turn, (readsInTurn.get(turn) ?? 0) + 1);
            return changes.read(...args);
          },
        },
      };
    };
    // One transaction: the hub hears of it once, far past what it keeps in memory, and leaves
    // the streams to read the store (it would follow batches of a thousand one by one).
    const writes: PlantWrite[] = Array.from({ length: CHANGES }, (_, i) => ({
      kind: 'create',
      plant: { id: BigInt(1 + i), name: `plant ${1 + i}`, tag: 'common' },
    }));
    await app.services.store.plants.writeAll(writes);
    const marker = await postPlant(
      base,
      app.token,
      JSON.stringify({ id: CHANGES + 1, name: 'the marker', tag: 'marker' }),
    );
    assert.equal(marker.status, 200, marker.text);
    const texts = await Promise.all(streams);
    ticking = false;
    feed.reads = reads;
    for (const text of texts) assert.equal(text.match(/^event: created$/gm)?.length, 1, 'the one change it wants');
    const total = [...readsInTurn.values()].reduce((a, b) => a + b, 0);
    const most = Math.max(...readsInTurn.values());
    assert.ok(total >= STREAMS, `the streams walked the log: ${total} reads`);
    assert.ok(most <= 2, `${most} reads of the log in one turn of the event loop (of ${total})`);
  });
});
