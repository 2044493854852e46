// GET /plants/changes answers a stream or a JSON page by the client's Accept, honouring q values
// (RFC 9110 §12.5.1): the function alone for every kind of header, then once through the app, where
// a client that prefers the page gets the page.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { prefersEventStream } from '../../src/http/headers/negotiate.js';
import { useTestApp } from '../helper.js';
import { requests } from '../support/changes.js';

describe('Accept on GET /plants/changes', () => {
  it('prefers what the client prefers', () => {
    const cases: [string | undefined, boolean][] = [
      [undefined, false],
      ['', false],
      ['text/event-stream', true],
      ['TEXT/Event-Stream', true],
      ['application/json', false],
      ['*/*', false],
      ['text/*', true],
      ['application/json, text/event-stream;q=0.1', false],
      ['application/json;q=0.1, text/event-stream', true],
      ['text/event-stream;q=0.5 ,  application/json ; q=0.9', false],
      ['application/json;q=0.2,text/event-stream;q=0.8', true],
      ['text/event-stream;q=0', false],
      ['text/event-stream;q=0.000', false],
      ['text/event-stream;q=0, */*', false],
      ['*/*;q=0.1, text/event-stream', true],
      ['text/event-stream;q=oops', false],
      ['image/png', false],
      [',,;', false],
    ];
    for (const [accept, stream] of cases) assert.equal(prefersEventStream(accept), stream, String(accept));
  });

  describe('through the app', () => {
    const t = useTestApp({ store: 'sqlite' });

    it('answers the JSON page to a client that prefers it to the stream', async () => {
      const res = await t.app.inject({
        path: '/plants/changes',
        headers: { ...requests(t.app).auth, accept: 'application/json, text/event-stream;q=0.1' },
      });
      assert.equal(res.status, 200, res.text);
      assert.match(String(res.headers['content-type']), /^application\/json/);
      assert.equal(res.text, '[]');
    });
  });
});
