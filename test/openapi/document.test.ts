import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { createAjv } from '../../src/openapi/validation.js';
import { loadDocument } from '../../src/openapi/document.js';
import { parametersSchema, requestSchema } from '../../src/openapi/request-schema.js';

describe('the OpenAPI document', () => {
  const doc = loadDocument();

  it('keeps the seed: POST /plants secured by bearerAuth, NewPlant in, Plant out, Error on 400', () => {
    const add = doc.operations.get('addPlant');
    assert.ok(add);
    assert.equal(add.method, 'POST');
    assert.equal(add.path, '/plants');
    assert.deepEqual(add.scopes, ['plants:write']);
    const schemas = (doc.raw.components as { schemas: Record<string, unknown> }).schemas;
    assert.deepEqual(add.responses['200'], schemas.Plant);
    assert.deepEqual(add.responses['400'], schemas.Error);
    assert.deepEqual(add.requestBody, {
      ...(schemas.NewPlant as object),
      allOf: [(schemas.NewPlant as { allOf: unknown[] }).allOf[0], schemas.Plant],
    });
  });

  it('lists every path with its methods for 404/405 answers, HEAD wherever GET', () => {
    const plants = doc.paths.find((p) => p.path === '/plants');
    assert.deepEqual(plants?.methods, ['GET', 'HEAD', 'POST']);
    const one = doc.paths.find((p) => p.path === '/plants/{id}');
    assert.deepEqual(one?.methods, ['GET', 'HEAD', 'PUT', 'DELETE', 'PATCH']);
    assert.ok(one?.pattern.test('/plants/12') && !one.pattern.test('/plants/12/x'));
    assert.ok(plants?.pattern.test('/plants'));
    assert.ok(!plants?.pattern.test('/plants/'));
  });

  it('merges path-level parameters into each operation', () => {
    const names = (id: string) => doc.operations.get(id)?.parameters.map((p) => p.name);
    for (const id of ['replacePlant', 'patchPlant', 'deletePlant']) {
      assert.deepEqual(names(id), ['id', 'If-Match', 'If-None-Match'], id);
    }
    assert.deepEqual(names('getPlant'), ['id', 'Change-Position', 'If-Match', 'If-None-Match']);
    assert.deepEqual(names('listPlants'), [
      'limit',
      'after',
      'tag',
      'q',
      'Change-Position',
      'If-Match',
      'If-None-Match',
    ]);
  });

  it('turns path and query integers into decimal-digit checks with their ranges', () => {
    const list = doc.operations.get('listPlants')!;
    assert.deepEqual(parametersSchema(list.parameters, 'query'), {
      type: 'object',
      properties: {
        limit: { default: '20', decimalInteger: { min: '1', max: '1000', bigint: false } },
        after: {
          decimalInteger: { min: '-9223372036854775808', max: '9223372036854775807', bigint: true },
        },
        tag: {
          type: 'array',
          minItems: 1,
          maxItems: 10,
          items: { type: 'string', maxLength: 64, pattern: '^[^\\u0000]*$' },
          examples: [['tropical']],
        },
        // Examples are annotations: they stay, and validate nothing.
        q: { type: 'string', minLength: 1, maxLength: 200, pattern: '^[^\\u0000]*$', examples: ['monstera'] },
      },
    });
    assert.equal(parametersSchema(list.parameters, 'path'), undefined);
  });

  it('has request schemas that are valid JSON Schema 2020-12 once made exact', () => {
    const ajv = createAjv({ validateSchema: true });
    for (const op of doc.operations.values()) {
      if (op.requestBody)
        assert.doesNotThrow(() => ajv.compile(requestSchema(op.requestBody) as object), op.operationId);
      for (const where of ['path', 'query'] as const) {
        const schema = parametersSchema(op.parameters, where);
        if (schema) assert.doesNotThrow(() => ajv.compile(schema), `${op.operationId} ${where}`);
      }
    }
  });

  it('turns int64 integers into the exact int64 keyword for request validation only', () => {
    const schema = requestSchema({ properties: { id: { type: 'integer', format: 'int64', description: 'd' } } });
    assert.deepEqual(schema, { properties: { id: { int64: true, description: 'd' } } });
  });
});
