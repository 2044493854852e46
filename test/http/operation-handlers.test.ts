// The app and the document agree on their operations, or the app does not start: an operation
// of the document without a handler would otherwise answer 405 to every request, silently, and a
// handler of an operation the document lacks would have no route, scope or schema to go by.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { buildApp } from '../../src/http/app.js';
import { loadDocument, readDocument, type ApiDocument, type JsonObject } from '../../src/openapi/document.js';
import { buildTestApp, type TestApp } from '../helper.js';
import { stores, suiteOptions } from '../support/stores.js';

const dir = mkdtempSync(join(tmpdir(), 'plant-store-operations-'));
after(() => rmSync(dir, { recursive: true, force: true }));

/** The repository's document, changed by `edit`, loaded the way the app loads it. */
function documentWith(name: string, edit: (paths: Record<string, JsonObject>) => void): ApiDocument {
  const raw = structuredClone(readDocument());
  edit(raw.paths as Record<string, JsonObject>);
  const file = join(dir, `${name}.json`);
  writeFileSync(file, JSON.stringify(raw));
  return loadDocument(pathToFileURL(file));
}

for (const store of stores) {
  describe(`the app's operations are the document's [${store}]`, suiteOptions(store), () => {
    let server: TestApp;
    before(async () => {
      server = await buildTestApp({ store });
    });
    after(async () => {
      await server?.close();
    });

    it('does not start when the document has an operation with no handler, and names it', async () => {
      const doc = documentWith('extra', (paths) => {
        const getPlant = paths['/plants/{id}']!.get as JsonObject;
        paths['/plants/{id}/history'] = { get: { ...getPlant, operationId: 'getPlantHistory' } };
      });
      await assert.rejects(buildApp({ ...server.services, doc }), {
        message:
          "no handler for the OpenAPI document's getPlantHistory: register each with app.operation() (src/http/routes/)",
      });
    });

    it('does not start when a handler names an operation the document lacks, and names it', async () => {
      const doc = documentWith('fewer', (paths) => {
        delete paths['/metrics'];
      });
      await assert.rejects(buildApp({ ...server.services, doc }), {
        message: 'operation getMetrics is not in the OpenAPI document',
      });
    });

    it('starts with the document as it is, every operation handled', async () => {
      const res = await server.inject({ path: '/healthz' });
      assert.equal(res.status, 200);
    });
  });
}
