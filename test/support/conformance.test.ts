import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { checkResponse } from './conformance.js';
import type { RawResponse } from './http.js';

const json = (status: number, body: unknown, headers: Record<string, string> = {}): RawResponse => ({
  status,
  headers: { 'content-type': 'application/json; charset=utf-8', 'x-request-id': 'r-1', ...headers },
  text: JSON.stringify(body),
  json: body,
});
const other = (
  status: number,
  type: string | undefined,
  text: string,
  headers: Record<string, string> = {},
): RawResponse => ({
  status,
  headers: { ...(type !== undefined && { 'content-type': type }), 'x-request-id': 'r-1', ...headers },
  text,
  json: undefined,
});
const error = (status: number) => json(status, { error: status, message: 'x' });

describe('the conformance check used by every HTTP test', () => {
  it('accepts responses the document declares', () => {
    const accepted: [string, string, RawResponse][] = [
      [
        'POST',
        '/plants',
        json(200, { name: 'a' }, { etag: `"${'c'.repeat(27)}"`, 'change-position': '1795000000000001' }),
      ],
      ['POST', '/plants', error(409)],
      [
        'GET',
        '/plants?limit=1',
        json(200, [{ id: 1, name: 'a' }], {
          link: '</plants?limit=1&after=1>; rel="next"',
          'change-position': '1795000000000001',
        }),
      ],
      // JSON.parse turns 9223372036854775807 into 2^63: still accepted as an int64.
      [
        'GET',
        '/plants/9223372036854775807',
        json(200, JSON.parse('{"id":9223372036854775807,"name":"a"}'), { etag: `"${'d'.repeat(27)}"` }),
      ],
      ['DELETE', '/plants/1', other(204, undefined, '', { 'change-position': '1795000000000001' })],
      ['GET', '/readyz', json(503, { error: 503, message: 'x' }, { 'retry-after': '1' })],
      ['GET', '/docs', other(200, 'text/html; charset=utf-8', '<!doctype html>')],
      ['GET', '/docs/swagger-ui.css', other(200, 'text/css; charset=utf-8', '.a{}')],
      ['GET', '/nope', error(404)],
      ['POST', '/plants/1', json(405, { error: 405, message: 'x' }, { allow: 'GET, HEAD, PUT, DELETE, PATCH' })],
      ['GET', '/plants/1', other(304, undefined, '', { etag: `"${'a'.repeat(27)}"` })],
      [
        'PATCH',
        '/plants/1',
        json(200, { name: 'a' }, { etag: `"${'b'.repeat(27)}"`, 'change-position': '1795000000000001' }),
      ],
      ['PATCH', '/plants/1', error(412)],
      ['PATCH', '/plants/1', error(415)],
      ['PUT', '/plants/1', error(412)],
      ['DELETE', '/plants/1', error(412)],
      ['GET', '/plants/1', error(412)],
      ['GET', '/plants', other(304, undefined, '')],
      ['POST', '/plants', error(412)],
      [
        'GET',
        '/plants?tag=a&q=b',
        json(200, [], {
          link: '</plants?limit=1&tag=a%20b&q=c&after=1>; rel="next"',
          'change-position': '1795000000000001',
        }),
      ],
      [
        'GET',
        '/plants/changes?tag=a',
        json(200, [{ position: 1795000000000002, type: 'deleted', id: 1, time: '2026-11-26T12:00:00.000Z' }], {
          link: '</plants/changes?limit=100&tag=a&after=1795000000000002>; rel="next"',
        }),
      ],
      ['GET', '/plants/changes', other(200, 'text/event-stream; charset=utf-8', ': following the changes\n\n')],
      ['GET', '/plants/changes?after=1', error(410)],
      // The HTTP layer may answer any request with these before it reaches an operation.
      ['GET', '/healthz', error(431)],
    ];
    for (const [method, path, res] of accepted)
      assert.deepEqual(checkResponse(method, path, res), [], `${method} ${path}`);
  });

  it('bites on each kind of deliberately wrong response', () => {
    const wrong: [string, string, RawResponse, RegExp][] = [
      ['DELETE', '/plants/1', other(204, undefined, ''), /must have required property 'change-position'/],
      [
        'GET',
        '/plants/changes',
        json(200, [{ position: 1, type: 'deleted', id: 1, time: 'yesterday' }]),
        /must match format "date-time"/,
      ],
      ['POST', '/plants', json(201, { name: 'a' }), /answered 201, which the document does not declare/],
      ['POST', '/plants', json(200, { tag: 'no name' }), /body: \(root\) must have required property 'name'/],
      ['POST', '/plants', json(200, { name: 'a'.repeat(257) }), /body: \/name must NOT have more than 256 characters/],
      [
        'POST',
        '/plants',
        other(200, 'text/plain', 'ok'),
        /content-type "text\/plain"; the document lists application\/json/,
      ],
      ['POST', '/plants', other(200, 'application/json', '{"name":'), /body is not JSON/],
      ['GET', '/plants', json(200, [{ name: 'no id' }]), /body: \/0 must have required property 'id'/],
      ['GET', '/plants/1', json(200, { id: 2 ** 64, name: 'a' }), /body: \/id must match format "int64"/],
      ['DELETE', '/plants/1', json(204, { name: 'a' }), /204 has a body, but the document declares none/],
      [
        'POST',
        '/plants',
        json(200, { name: 'a' }, { 'x-request-id': 'has space' }),
        /headers: \/headers\/x-request-id/,
      ],
      ['GET', '/plants', json(200, [], { link: '<https://elsewhere/>; rel="next"' }), /headers: \/headers\/link/],
      ['GET', '/readyz', json(503, { error: 503, message: 'x' }, { 'retry-after': 'soon' }), /headers: .*retry-after/],
      ['POST', '/plants', json(400, { error: 401, message: 'x' }), /error field 401 differs from the status 400/],
      ['POST', '/plants', json(400, { message: 'x' }), /must have required property 'error'/],
      ['POST', '/plants', other(400, 'text/html', 'x'), /400 with content-type "text\/html", not application\/json/],
      ['POST', '/plants/1', error(404), /POST \/plants\/1 matches no method, but answered 404/],
      ['POST', '/plants/1', error(405), /405 without an Allow header/],
      [
        'GET',
        '/plants/1',
        other(304, 'application/json', '{"id":1}'),
        /304 has a body, but the document declares none/,
      ],
      ['GET', '/plants/1', json(200, { id: 1, name: 'a' }, { etag: 'W/"x"' }), /headers: \/headers\/etag/],
      ['GET', '/plants/1', json(200, { id: 1, name: 'a' }), /headers: .*must have required property 'etag'/],
      [
        'POST',
        '/plants',
        { ...json(200, { name: 'a' }), headers: { 'content-type': 'application/json' } },
        /headers: .*must have required property 'x-request-id'/,
      ],
      ['GET', '/plants', error(409), /answered 409, which the document does not declare/],
      ['POST', '/plants', error(304), /answered 304, which the document does not declare/],
      ['GET', '/nope', json(200, {}), /GET \/nope matches no path, but answered 200/],
    ];
    for (const [method, path, res, expected] of wrong) {
      const problems = checkResponse(method, path, res);
      assert.match(problems.join('\n'), expected, `${method} ${path} ${res.status}: ${problems.join('; ')}`);
    }
  });
});
