import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { checkResponse } from './conformance.js';
import type { RawResponse } from './http.js';

const json = (status: number, body: unknown): RawResponse => ({
  status,
  headers: { 'content-type': 'application/json; charset=utf-8' },
  text: JSON.stringify(body),
  json: body,
});

describe('the conformance check used by every HTTP test', () => {
  it('accepts responses the document declares', () => {
    assert.deepEqual(checkResponse('POST', '/plants', json(200, { name: 'a' })), []);
    assert.deepEqual(checkResponse('POST', '/plants', json(409, { error: 409, message: 'x' })), []);
    assert.deepEqual(checkResponse('GET', '/nope', json(404, { error: 404, message: 'x' })), []);
    assert.deepEqual(checkResponse('GET', '/plants', json(200, [{ id: 1, name: 'a' }])), []);
    assert.deepEqual(checkResponse('PATCH', '/plants/1', json(405, { error: 405, message: 'x' })), []);
  });

  it('bites on an undeclared status, a wrong body, a wrong error field and a non-JSON error', () => {
    assert.notDeepEqual(checkResponse('POST', '/plants', json(201, { name: 'a' })), []);
    assert.notDeepEqual(checkResponse('POST', '/plants', json(200, { tag: 'no name' })), []);
    assert.notDeepEqual(checkResponse('POST', '/plants', json(400, { error: 401, message: 'x' })), []);
    assert.notDeepEqual(checkResponse('POST', '/plants', json(400, { message: 'x' })), []);
    assert.notDeepEqual(
      checkResponse('POST', '/plants', {
        status: 400,
        headers: { 'content-type': 'text/html' },
        text: 'x',
        json: undefined,
      }),
      [],
    );
    assert.notDeepEqual(checkResponse('GET', '/plants', json(200, [{ name: 'no id' }])), []);
    assert.notDeepEqual(checkResponse('PATCH', '/plants/1', json(404, { error: 404, message: 'x' })), []);
  });
});
