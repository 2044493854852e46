import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import fastJson from 'fast-json-stringify';
import { loadDocument } from '../../src/openapi/document.js';
import { responseSchema } from '../../src/openapi/response-schema.js';

describe('response schemas as the serialiser takes them', () => {
  const batch = loadDocument().operations.get('writePlantBatch')!.responses['200'] as Record<string, unknown>;
  const serialise = fastJson(responseSchema(batch) as object);

  it("writes a batch's results with no oneOf left for the serialiser to validate, the same JSON as the document's", () => {
    const answer = {
      results: [
        { status: 200, plant: { name: 'Monstera', tag: 'tropical' }, etag: '"2h5W0Lp3mYb7oQx1k9TzR4sVdEa"' },
        { status: 204 },
        { status: 200, plant: { name: 'Fern' }, etag: '"2h5W0Lp3mYb7oQx1k9TzR4sVdEb"' },
      ],
    };
    assert.ok(!JSON.stringify(responseSchema(batch)).includes('"oneOf"'));
    assert.equal(serialise(answer), JSON.stringify(answer));
    assert.equal(serialise(answer), fastJson(batch as object)(answer));
  });

  it('keeps only what every branch requires, and drops what no branch has', () => {
    const one = responseSchema({
      oneOf: [
        {
          type: 'object',
          required: ['status', 'plant'],
          properties: { status: { type: 'integer', const: 200 }, plant: { type: 'string' } },
        },
        { type: 'object', required: ['status'], properties: { status: { type: 'integer', const: 204 } } },
      ],
    }) as Record<string, unknown>;
    assert.deepEqual(one.required, ['status']);
    assert.deepEqual(one.properties, { status: { type: 'integer' }, plant: { type: 'string' } });
    assert.equal(fastJson(one as object)({ status: 204, other: 1 }), '{"status":204}');
  });

  it('keeps a oneOf whose branches share a property with nothing simple in common, or that are not objects', () => {
    const mixed = {
      oneOf: [
        { type: 'object', properties: { v: { type: 'string' } } },
        { type: 'object', properties: { v: { type: 'integer' } } },
      ],
    };
    assert.deepEqual(responseSchema(mixed), mixed);
    const scalars = { oneOf: [{ type: 'string' }, { type: 'integer' }] };
    assert.deepEqual(responseSchema(scalars), scalars);
  });
});
