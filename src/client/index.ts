// A typed client of the Plant Store API: `import { createPlantStoreClient } from '@plant-store/client'`,
// the package packages/client builds from this folder (the server package still exports it as
// `plant-store/client`). Its types are generated from the OpenAPI document (schema.ts,
// `npm run generate:client`); the calls go through openapi-fetch. What it imports must run in
// browsers too: no Node.js module (packages/client/tsconfig.json has no Node.js types).
import createClient, { type Middleware } from 'openapi-fetch';
import type { PlantStoreClient } from './client-type.js';
import { readJson } from '../json/read-json.js';
import { writeJson } from '../json/write-json.js';
import type { components, paths } from './schema.js';

export type { components, operations, paths } from './schema.js';
/** `{name, tag?}`: what creating or replacing a plant answers. */
export type Plant = components['schemas']['Plant'];
/** `{id, name, tag?}`: the body of a creation, and a plant as it is read back. */
export type NewPlant = components['schemas']['NewPlant'];
/** `{name?, tag?}`: a JSON merge patch of a plant (`tag: null` removes the tag). */
export type PlantPatch = components['schemas']['PlantPatch'];
/** One write of `POST /plants/batch`: `{op: 'create', plant}`, `{op: 'replace', id, plant}`, `{op: 'patch', id, patch}` or `{op: 'delete', id}`. */
export type BatchOperation = components['schemas']['BatchOperation'];
/** One operation's result in a batch's answer: `{status: 200, plant, etag}` or `{status: 204}`. */
export type BatchResult = components['schemas']['BatchResult'];
/** `{error, message}`: the body of every response that is not 2xx. */
export type ApiError = components['schemas']['Error'];
export type { PlantPatchInit, PlantStoreClient } from './client-type.js';

export interface PlantStoreClientOptions {
  /** Where the service is, e.g. `http://localhost:3000`. */
  baseUrl: string;
  /** An API token, sent as `Authorization: Bearer <token>`. */
  token?: string;
  /** The fetch to call; the global fetch by default. */
  fetch?: (request: Request) => Promise<Response>;
}

/**
 * A client of every operation of the document, typed from it:
 *
 *     const client = createPlantStoreClient({ baseUrl: 'http://localhost:3000', token });
 *     const { data, error } = await client.POST('/plants', { body: { id: 1, name: 'Monstera' } });
 *
 * Ids are exact over the whole int64 range: requests may carry them as bigint, and responses
 * are read without JSON.parse, which rounds integers past 2^53, so such ids arrive as bigint
 * (smaller ones as number).
 */
export function createPlantStoreClient(options: PlantStoreClientOptions): PlantStoreClient {
  const client = createClient<paths>({
    baseUrl: options.baseUrl,
    ...(options.token !== undefined && { headers: { authorization: `Bearer ${options.token}` } }),
    ...(options.fetch && { fetch: options.fetch }),
    bodySerializer: writeJson,
  });
  client.use(exactJson, mergePatch);
  return client;
}

/** PATCH is the document's one operation whose body is a JSON merge patch; openapi-fetch would label it application/json. */
const mergePatch: Middleware = {
  onRequest({ request }) {
    if (request.method !== 'PATCH' || !request.body) return undefined;
    const headers = new Headers(request.headers);
    headers.set('content-type', 'application/merge-patch+json');
    return new Request(request, { headers });
  },
};

/** Hands openapi-fetch responses whose `json()` is the exact reader. */
const exactJson: Middleware = {
  async onResponse({ response }) {
    const type = response.headers.get('content-type') ?? '';
    if (!/^application\/json\b/i.test(type) || response.status === 204) return undefined;
    const text = await response.text();
    const headers = new Headers(response.headers);
    // openapi-fetch calls json() when the length is known, and JSON.parse on the text otherwise.
    headers.set('content-length', String(new TextEncoder().encode(text).byteLength));
    const exact = new Response(text, { status: response.status, statusText: response.statusText, headers });
    // The reader's objects have no prototype; structuredClone makes them plain ones.
    Object.defineProperty(exact, 'json', { value: async () => structuredClone(readJson(text)) });
    return exact;
  },
};

export {
  ChangesGoneError,
  FollowError,
  followChanges,
  type Change,
  type FollowOptions,
  type SnapshotPlant,
} from './follow.js';
export { ListError, allPlants, type AllPlantsOptions } from './pages.js';
export { followChangesInBrowser, type BrowserFollowOptions, type BrowserFollower } from './follow-browser.js';
