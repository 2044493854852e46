import assert from 'node:assert/strict';
import { after, before } from 'node:test';
import { readJson } from '../../src/json/read-json.js';
import { buildTestApp, type TestApp } from '../helper.js';
import type { StoredPlant } from './db.js';
import { postPlant, send, type RawResponse, type Target } from './http.js';
import type { ServerProcess } from './server.js';
import type { StoreKind } from './stores.js';

/** A server under test: the app built in-process, or the built server spawned. */
export type Served = TestApp | ServerProcess;

/** Where requests to a server go: `inject` for an app built in-process, its URL for a process. */
export function targetOf(server: Served): Target {
  return 'inject' in server ? server : server.url;
}

/**
 * The plant a server holds under `id`, read back through `GET /plants/{id}` and parsed exactly
 * (ids as bigints, an absent tag as null); undefined when it answers 404. Works on every store.
 */
export async function storedPlant(server: Served, id: bigint): Promise<StoredPlant | undefined> {
  const r = await send(targetOf(server), {
    path: `/plants/${id}`,
    headers: { authorization: `Bearer ${server.token}` },
  });
  if (r.status === 404) return undefined;
  assert.equal(r.status, 200, `GET /plants/${id} answered ${r.status}: ${r.text}`);
  const p = readJson(r.text) as { id: number | bigint; name: string; tag?: string };
  return { id: BigInt(p.id), name: p.name, tag: p.tag ?? null };
}

/** A non-2xx answer: the seed's Error body, nothing else, error = status; `field` named in the message. */
export function assertError(r: RawResponse, status: number, field?: string): void {
  assert.equal(r.status, status, `expected ${status}, got ${r.status}: ${r.text}`);
  assert.match(String(r.headers['content-type']), /^application\/json(;|$)/);
  const body = r.json as Record<string, unknown>;
  assert.deepEqual(Object.keys(body).sort(), ['error', 'message'], r.text);
  assert.equal(body.error, status);
  assert.equal(typeof body.message, 'string');
  assert.ok((body.message as string).length > 0);
  if (field !== undefined) assert.match(body.message as string, new RegExp(`\\b${field}\\b`), r.text);
}

export interface PlantServer {
  /** The app, once the suite's `before` has run. */
  readonly server: TestApp;
  /** An id no test of the suite has used yet. */
  freshId(): number;
  /** POST /plants with the server's token. */
  post(body: string | Buffer, headers?: Record<string, string>): Promise<RawResponse>;
  /** POSTs `body` and expects 200 with exactly `expectedText`. */
  accepted(body: string, expectedText: string): Promise<void>;
  /** The plant stored under `id` (see storedPlant). */
  stored(id: bigint): Promise<StoredPlant | undefined>;
}

/**
 * For the POST /plants suites: builds the app on a fresh store of `store` before the enclosing
 * describe's tests and closes it after them. Call it inside that describe.
 */
export function usePlantServer(store: StoreKind): PlantServer {
  let server: TestApp | undefined;
  let nextId = 100_000;
  before(async () => {
    server = await buildTestApp({ store });
  });
  after(async () => {
    await server?.close();
  });
  const self: PlantServer = {
    get server() {
      assert.ok(server, 'the server has not started');
      return server;
    },
    freshId: () => nextId++,
    post: (body, headers = {}) => postPlant(self.server, self.server.token, body, headers),
    async accepted(body, expectedText) {
      const r = await self.post(body);
      assert.equal(r.status, 200, `${body} -> ${r.status} ${r.text}`);
      assert.equal(r.text, expectedText);
    },
    stored: (id) => storedPlant(self.server, id),
  };
  return self;
}
