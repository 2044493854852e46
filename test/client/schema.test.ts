import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { describe, it } from 'node:test';
import { renderClientTypes, schemaPath } from '../../scripts/generate-client.js';

describe('src/client/schema.ts', () => {
  it('is what openapi-typescript generates from the document now (else: npm run generate:client)', async () => {
    const committed = readFileSync(schemaPath, 'utf8');
    assert.ok(committed === (await renderClientTypes()), 'src/client/schema.ts is stale: run npm run generate:client');
  });
});
