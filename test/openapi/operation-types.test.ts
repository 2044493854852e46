// The handlers' types (src/openapi/operation-types.ts) tell the truth about what the contract's
// validators hand a handler. The type-level half is checked by `npm run typecheck` (TRUTHS below
// does not compile when a type changes); the tests check the run-time half, and the one list the
// types cannot read from the document.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { readJson } from '../../src/json/read-json.js';
import { loadDocument, type JsonObject } from '../../src/openapi/document.js';
import { QUERY_DEFAULTS, type OperationId, type OperationInput } from '../../src/openapi/operation-types.js';
import { parametersSchema, requestSchema } from '../../src/openapi/request-schema.js';
import { createAjv } from '../../src/openapi/validation.js';

type Equal<A, B> = (<T>() => T extends A ? 1 : 2) extends <T>() => T extends B ? 1 : 2 ? true : false;
type Flat<T> = { [K in keyof T]: T[K] };

export const TRUTHS: Record<string, true> = {
  // Path and query: an int64 is an exact bigint, an int32 a number, a default is always there.
  idParam: true satisfies Equal<OperationInput<'getPlant'>['params'], { id: bigint }>,
  fileParam: true satisfies Equal<OperationInput<'getApiReferenceAsset'>['params'], { file: string }>,
  listQuery: true satisfies Equal<
    Flat<OperationInput<'listPlants'>['query']>,
    { limit: number; after?: bigint; tag?: string[]; q?: string }
  >,
  // A body: the exact reader's number or bigint, as the client's types have it.
  bodyId: true satisfies Equal<OperationInput<'addPlant'>['body']['id'], number | bigint>,
  patchTag: true satisfies Equal<OperationInput<'patchPlant'>['body']['tag'], string | null | undefined>,
  noBody: true satisfies Equal<OperationInput<'deletePlant'>['body'], unknown>,
  headers: true satisfies Equal<
    OperationInput<'deletePlant'>['headers'],
    { 'if-match'?: string; 'if-none-match'?: string }
  >,
  // Webhooks are operations the document sends, not serves.
  served: true satisfies Equal<Extract<OperationId, `${string}Webhook`>, never>,
};

const doc = loadDocument();
const operations = [...doc.operations.values()];
const parameters = operations.flatMap((op) =>
  op.parameters.map((p) => ({ op, name: p.name as string, in: p.in as string, schema: p.schema as JsonObject })),
);

describe("the handlers' types (openapi/operation-types.ts)", () => {
  it('QUERY_DEFAULTS names every query parameter the document gives a default, and no other', () => {
    const defaults: Record<string, string[]> = {};
    for (const p of parameters) {
      if (p.in === 'query' && p.schema.default !== undefined) (defaults[p.op.operationId] ??= []).push(p.name);
    }
    assert.deepEqual(defaults, QUERY_DEFAULTS);
  });

  it('path and query integers are int32 (handed over as a number) or int64 (as a bigint), nothing else', () => {
    const ajv = createAjv();
    for (const p of parameters.filter((p) => p.in !== 'header' && p.schema.type === 'integer')) {
      const what = `${p.op.operationId} ${p.name}`;
      assert.ok(p.schema.format === 'int32' || p.schema.format === 'int64', `${what}: format ${p.schema.format}`);
      const validate = ajv.compile(parametersSchema(p.op.parameters, p.in as 'path' | 'query')!);
      const values: Record<string, unknown> = { [p.name]: String(p.schema.minimum ?? 1) };
      assert.ok(validate(values), what);
      assert.equal(typeof values[p.name], p.schema.format === 'int64' ? 'bigint' : 'number', what);
    }
  });

  it('a default is filled in, as the type says it is always there', () => {
    const list = doc.operations.get('listPlants')!;
    const query: Record<string, unknown> = {};
    assert.ok(createAjv().compile(parametersSchema(list.parameters, 'query')!)(query));
    assert.equal(query.limit, 20);
  });

  it('an int64 of a body is a number while safe, a bigint past 2^53', () => {
    const validate = createAjv().compile(requestSchema(doc.operations.get('addPlant')!.requestBody) as object);
    for (const [text, type] of [
      ['{"id": 9007199254740991, "name": "a"}', 'number'],
      ['{"id": 9007199254740992, "name": "a"}', 'bigint'],
      ['{"id": -9223372036854775808, "name": "a"}', 'bigint'],
    ] as const) {
      const body = readJson(text) as { id: unknown };
      assert.ok(validate(body), text);
      assert.equal(typeof body.id, type, text);
    }
  });
});
