import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { after, before, describe, it } from 'node:test';
import type { JsonObject } from '../../src/openapi/document.js';
import { send } from '../support/http.js';
import { buildTestApp, type TestApp } from '../helper.js';

interface PropertyFact {
  type: string;
  format?: string;
  meaning: string;
}
interface SchemaFact {
  required: string[];
  properties: Record<string, PropertyFact>;
}
interface BodyFact {
  description?: string;
  contentType: string;
  schema: string;
}
type BodyCheck = [what: string, fact: BodyFact, actual: JsonObject | undefined];
interface SeedFacts {
  openapi: string;
  info: { version: string; license: string };
  securitySchemes: Record<string, { type: string; scheme: string }>;
  schemas: Record<string, SchemaFact>;
  operations: {
    method: string;
    path: string;
    security: string;
    requestBody: BodyFact & { required: boolean; description: string };
    responses: Record<string, BodyFact>;
  }[];
}

const facts = JSON.parse(readFileSync(new URL('../fixtures/seed-contract.json', import.meta.url), 'utf8')) as SeedFacts;

const at = (node: unknown, key: string) => (node as JsonObject | undefined)?.[key] as JsonObject | undefined;

/** Follows `$ref`s inside the document to the node they name. */
function deref(doc: JsonObject, node: JsonObject | undefined): JsonObject | undefined {
  let current = node;
  for (let hops = 0; typeof current?.$ref === 'string' && hops < 16; hops++) {
    const pointer = (current.$ref as string).replace(/^#\//, '').split('/');
    current = pointer.reduce<JsonObject | undefined>(
      (n, key) => at(n, key.replace(/~1/g, '/').replace(/~0/g, '~')),
      doc,
    );
  }
  return current;
}

/** A schema's properties and required names, with those of its allOf parts. */
function flatten(
  doc: JsonObject,
  node: JsonObject | undefined,
): SchemaFact & { properties: Record<string, JsonObject> } {
  const schema = deref(doc, node) ?? {};
  const parts = ((schema.allOf as JsonObject[] | undefined) ?? []).map((part) => flatten(doc, part));
  return {
    required: [...new Set([...parts.flatMap((p) => p.required), ...((schema.required as string[]) ?? [])])].sort(),
    properties: Object.assign({}, ...parts.map((p) => p.properties), (schema.properties as JsonObject) ?? {}),
  };
}

/** Every way in which the document departs from the seed's facts; empty when it keeps them all. */
function seedViolations(doc: JsonObject): string[] {
  const problems: string[] = [];
  const expect = (ok: boolean, what: string) => ok || problems.push(what);
  const info = at(doc, 'info');
  expect(doc.openapi === facts.openapi, `openapi is ${String(doc.openapi)}, not ${facts.openapi}`);
  expect(info?.version === facts.info.version, `info.version is ${String(info?.version)}`);
  expect(at(info, 'license')?.name === facts.info.license, 'the license is not MIT');

  for (const [name, scheme] of Object.entries(facts.securitySchemes)) {
    const actual = at(at(at(doc, 'components'), 'securitySchemes'), name);
    expect(actual?.type === scheme.type && actual?.scheme === scheme.scheme, `security scheme ${name} changed`);
  }

  const schemas = at(at(doc, 'components'), 'schemas');
  for (const [name, fact] of Object.entries(facts.schemas)) {
    if (!expect(!!schemas?.[name], `schema ${name} is missing`)) continue;
    const actual = flatten(doc, at(schemas, name));
    expect(
      JSON.stringify(Object.keys(actual.properties).sort()) === JSON.stringify(Object.keys(fact.properties).sort()),
      `${name} has the fields ${Object.keys(actual.properties)}, not ${Object.keys(fact.properties)}`,
    );
    expect(
      JSON.stringify(actual.required) === JSON.stringify([...fact.required].sort()),
      `${name} requires ${actual.required}`,
    );
    for (const [field, property] of Object.entries(fact.properties)) {
      const schema = deref(doc, actual.properties[field]);
      expect(schema?.type === property.type, `${name}.${field} is not of type ${property.type}`);
      expect(schema?.format === property.format, `${name}.${field} has format ${String(schema?.format)}`);
      expect(
        String(schema?.description).startsWith(property.meaning),
        `${name}.${field} no longer means "${property.meaning}"`,
      );
    }
  }

  for (const op of facts.operations) {
    const name = `${op.method.toUpperCase()} ${op.path}`;
    const operation = at(at(at(doc, 'paths'), op.path), op.method);
    if (!expect(!!operation, `${name} is missing`)) continue;
    const security = (operation!.security ?? doc.security) as JsonObject[] | undefined;
    expect(
      !!security?.length && security.every((requirement) => op.security in requirement),
      `${name} can be called without ${op.security}`,
    );
    const body = deref(doc, at(operation, 'requestBody'));
    expect(body?.required === op.requestBody.required, `${name}'s body is not required`);
    const bodies: BodyCheck[] = [
      ['request body', op.requestBody, body],
      ...Object.entries(op.responses).map(([status, fact]): BodyCheck => [
        status,
        fact,
        deref(doc, at(at(operation, 'responses'), status)),
      ]),
    ];
    for (const [what, fact, actual] of bodies) {
      if (fact.description !== undefined) {
        expect(actual?.description === fact.description, `${name} ${what} is no longer "${fact.description}"`);
      }
      const ref = at(at(at(actual, 'content'), fact.contentType), 'schema')?.$ref;
      expect(
        ref === `#/components/schemas/${fact.schema}`,
        `${name} ${what} is not ${fact.contentType} ${fact.schema}`,
      );
    }
  }
  return problems;
}

// One store: the document the server serves does not depend on it.
describe('the seed contract', () => {
  let server: TestApp;
  let served: JsonObject;

  before(async () => {
    server = await buildTestApp();
    const res = await send(server, { path: '/openapi.json' });
    assert.equal(res.status, 200);
    served = res.json as JsonObject;
  });
  after(() => server.close());

  it('is kept, fact by fact, by the document the server serves', () => {
    assert.deepEqual(seedViolations(served), []);
  });

  it('is broken by any change to one of its facts', () => {
    const changes: [string, (doc: JsonObject) => void, RegExp][] = [
      ['version', (d) => (at(d, 'info')!.version = '1.0.1'), /info.version is 1.0.1/],
      ['license', (d) => (at(at(d, 'info'), 'license')!.name = 'Apache-2.0'), /license is not MIT/],
      [
        'scheme',
        (d) => (at(at(at(d, 'components'), 'securitySchemes'), 'bearerAuth')!.scheme = 'basic'),
        /bearerAuth changed/,
      ],
      [
        'id format',
        (d) => (flatten(d, schema(d, 'NewPlant')).properties.id!.format = 'int32'),
        /NewPlant.id has format int32/,
      ],
      ['required', (d) => (schema(d, 'Plant').required = []), /Plant requires $/m],
      [
        'new field',
        (d) => (at(schema(d, 'Plant'), 'properties')!.id = { type: 'integer' }),
        /Plant has the fields name,tag,id/,
      ],
      [
        'field type',
        (d) => (at(at(schema(d, 'Error'), 'properties'), 'message')!.type = 'integer'),
        /Error.message is not of type string/,
      ],
      [
        'meaning',
        (d) => (at(at(schema(d, 'Error'), 'properties'), 'error')!.description = 'x'),
        /no longer means "Numeric error value"/,
      ],
      ['security', (d) => (post(d).security = []), /POST \/plants can be called without bearerAuth/],
      [
        'request',
        (d) => (at(at(deref(d, at(post(d), 'requestBody')), 'content'), 'application/json')!.schema = {}),
        /request body is not/,
      ],
      [
        'response',
        (d) => (response(d, '200').schema = { $ref: '#/components/schemas/NewPlant' }),
        /POST \/plants 200 is not application\/json Plant/,
      ],
    ];
    for (const [what, change, expected] of changes) {
      const doc = structuredClone(served);
      change(doc);
      assert.match(seedViolations(doc).join('\n'), expected, what);
    }
  });
});

const schema = (doc: JsonObject, name: string) => at(at(at(doc, 'components'), 'schemas'), name)!;
const post = (doc: JsonObject) => at(at(at(doc, 'paths'), '/plants'), 'post')!;
const response = (doc: JsonObject, status: string) =>
  at(at(at(post(doc), 'responses'), status), 'content')!['application/json'] as JsonObject;
