// Authentication: bearer tokens, the RFC 6750 challenges, scopes, tokens created, revoked and
// expiring while the server runs, and tokens kept out of the logs. In process, on both stores.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { setTimeout as sleep } from 'node:timers/promises';
import { parseDuration, type Scope } from '../../src/domain/token.js';
import { createToken as create } from '../../src/use-cases/create-token.js';
import { revokeToken } from '../../src/use-cases/revoke-token.js';
import { buildTestApp, type TestApp } from '../helper.js';
import { stores, suiteOptions } from '../support/stores.js';
import { newToken } from '../support/server.js';
import { postPlant, send, type RawResponse } from '../support/http.js';

for (const store of stores) {
  describe(`authentication [${store}]`, suiteOptions(store), () => {
    let server: TestApp;
    let nextId = 1;

    before(async () => {
      server = await buildTestApp({ store, logs: true });
    });
    after(async () => {
      await server?.close();
    });

    const REALM = 'Bearer realm="plant-store"';

    /** A token created in the store while the app runs, as `token create` does. */
    async function createToken(name: string, options: { scope?: Scope; expiresIn?: string } = {}): Promise<string> {
      const ms = options.expiresIn === undefined ? undefined : parseDuration(options.expiresIn)!;
      const created = await create(server.services.store, {
        name,
        ...(options.scope && { scopes: [options.scope] }),
        ...(ms !== undefined && { expiresAt: new Date(Date.now() + ms) }),
      });
      return created.token;
    }

    const plantBody = () => `{"id":${nextId++},"name":"auth"}`;
    const withAuth = (authorization: string, path = '/plants') =>
      send(server, {
        method: 'POST',
        path,
        headers: { authorization, 'content-type': 'application/json' },
        body: plantBody(),
      });

    function assert401(r: RawResponse, invalidToken: boolean): void {
      assert.equal(r.status, 401, r.text);
      assert.deepEqual(Object.keys(r.json as object).sort(), ['error', 'message']);
      assert.equal((r.json as { error: number }).error, 401);
      const challenge = r.headers['www-authenticate'];
      if (invalidToken) {
        assert.match(String(challenge), /^Bearer realm="plant-store", ?error="invalid_token"/);
      } else {
        assert.equal(challenge, REALM);
      }
    }

    /** Polls `check` until it is true, up to `ms`; resolves to whether it became true. */
    async function eventually(check: () => Promise<boolean>, ms = 1500): Promise<boolean> {
      const deadline = Date.now() + ms;
      for (;;) {
        if (await check()) return true;
        if (Date.now() >= deadline) return false;
        await sleep(50);
      }
    }

    describe('credentials', () => {
      it('a missing Authorization header is 401 with the bare challenge', async () => {
        assert401(await postPlant(server, undefined, plantBody()), false);
      });

      it('an empty Authorization header is 401 with the bare challenge', async () => {
        assert401(await withAuth(''), false);
      });

      it('another scheme (Basic) is 401 with the bare challenge', async () => {
        assert401(await withAuth(`Basic ${Buffer.from('user:pass').toString('base64')}`), false);
        assert401(await withAuth(`Token ${server.token}`), false);
      });

      it('the scheme name is case-insensitive', async () => {
        for (const scheme of ['bearer', 'BEARER', 'BeArEr']) {
          const r = await withAuth(`${scheme} ${server.token}`);
          assert.equal(r.status, 200, `${scheme}: ${r.text}`);
        }
      });

      for (const [what, header] of [
        ['a token with a space', () => `Bearer ${server.token} extra`],
        ['a token with a quote', () => `Bearer "${server.token}"`],
        ['a token with a comma', () => `Bearer abc,def`],
        ['an unknown token', () => `Bearer ${newToken()}`],
        ['an unknown token of another shape', () => 'Bearer abcdefghijklmnopqrstuvwxyz0123456789'],
      ] as const) {
        it(`${what} is 401 invalid_token`, async () => {
          assert401(await withAuth(header()), true);
        });
      }

      it('a token in the query string is not accepted', async () => {
        const r = await send(server, {
          method: 'POST',
          path: `/plants?access_token=${encodeURIComponent(server.token)}`,
          headers: { 'content-type': 'application/json' },
          body: plantBody(),
        });
        assert401(r, false);
      });
    });

    describe('scopes', () => {
      it('a token without plants:write gets 403 insufficient_scope', async () => {
        const ro = await createToken('ro', { scope: 'plants:read' });
        assert.match(ro, /^pst_[A-Za-z0-9_-]{43}$/);
        const id = nextId++;
        const r = await postPlant(server, ro, `{"id":${id},"name":"ro"}`);
        assert.equal(r.status, 403, r.text);
        assert.deepEqual(r.json, { error: 403, message: (r.json as { message: string }).message });
        const challenge = String(r.headers['www-authenticate']);
        assert.match(challenge, /^Bearer realm="plant-store"/);
        assert.match(challenge, /error="insufficient_scope"/);
        assert.match(challenge, /scope="plants:write"/);
      });

      it('a token with plants:write only may POST', async () => {
        const rw = await createToken('rw', { scope: 'plants:write' });
        const r = await postPlant(server, rw, plantBody());
        assert.equal(r.status, 200, r.text);
      });
    });

    describe('tokens managed while the server runs', () => {
      it('a token created while the server runs works within 1 s', async () => {
        const token = await createToken('live');
        const ok = await eventually(async () => (await postPlant(server, token, plantBody())).status === 200);
        assert.ok(ok, 'the new token did not work within 1.5 s');
      });

      it('a token revoked while the server runs stops working within 1 s, with invalid_token', async () => {
        const token = await createToken('to-revoke');
        assert.equal((await postPlant(server, token, plantBody())).status, 200);
        const row = (await server.services.store.tokens.list()).find((r) => r.name === 'to-revoke');
        assert.ok(row);
        await revokeToken(server.services.store, row.id);
        let last: RawResponse | undefined;
        const refused = await eventually(async () => {
          last = await postPlant(server, token, plantBody());
          return last.status === 401;
        });
        assert.ok(refused, `the revoked token still worked after 1.5 s: ${last?.status}`);
        assert401(last!, true);
        // Other tokens are unaffected.
        assert.equal((await postPlant(server, server.token, plantBody())).status, 200);
      });

      it('a token with --expires-in 1s works, then is 401 invalid_token', async (t) => {
        const before = Date.now();
        const token = await createToken('short', { expiresIn: '1s' });
        const created = Date.now();
        const first = await postPlant(server, token, plantBody());
        if (Date.now() < before + 1000) {
          assert.equal(first.status, 200, first.text);
        } else {
          t.diagnostic(`machine too slow to observe the token before it expired (${Date.now() - before} ms)`);
        }
        // The expiry was set at most 1 s after `created`; wait past it.
        await sleep(Math.max(0, created + 1500 - Date.now()));
        const r = await postPlant(server, token, plantBody());
        assert401(r, true);
      });
    });

    describe('logs', () => {
      it('never contain a token, and each request has exactly one "request" line with its reqId', async () => {
        const t = server.token;
        const other = 'abcdefghijklmnopqrstuvwxyz0123456789-secret';
        const q = encodeURIComponent(t);
        const requests: [string, () => Promise<RawResponse>][] = [
          ['log-1', () => postPlant(server, t, plantBody(), { 'x-request-id': 'log-1' })],
          ['log-2', () => withAuthId('log-2', `Bearer ${t}`, `/plants?access_token=${q}`)],
          ['log-3', () => withAuthId('log-3', `Bearer ${other}`, `/plants?access_token=${q}&x=1`)],
          ['log-4', () => withAuthId('log-4', `Bearer ${t}`, `/nope?access_token=${q}`)],
          [
            'log-5',
            () =>
              send(server, {
                method: 'GET',
                path: `/plants?access_token=${q}`,
                headers: { 'x-request-id': 'log-5', authorization: `Bearer ${t}` },
              }),
          ],
          ['log-6', () => withAuthId('log-6', `Basic ${Buffer.from(`u:${t}`).toString('base64')}`, '/plants')],
          ['log-7', () => withAuthId('log-7', `Bearer ${t}`, `/plants?ACCESS_TOKEN=${q}`)],
          [
            'log-413',
            () =>
              postPlant(server, t, `{"pad":"${'a'.repeat(20_000)}"}`, {
                'x-request-id': 'log-413',
                'content-length': '20010',
              }),
          ],
          ['log-415', () => postPlant(server, t, '{}', { 'x-request-id': 'log-415', 'content-type': 'text/plain' })],
          ['log-400', () => postPlant(server, t, '{"id":', { 'x-request-id': 'log-400' })],
        ];
        for (const [, go] of requests) await go();

        const linesFor = (id: string) =>
          server.logs
            .map((l) => {
              try {
                return JSON.parse(l) as Record<string, unknown>;
              } catch {
                return undefined;
              }
            })
            .filter((e) => e?.msg === 'request' && e.reqId === id);
        const logged = await eventually(async () => requests.every(([id]) => linesFor(id).length >= 1), 2000);
        assert.ok(logged, 'not every request was logged');
        await sleep(200);
        for (const [id] of requests) assert.equal(linesFor(id).length, 1, `request ${id}`);
        // The line is built by hand (request-log.ts), as pino writes a line: its fields, in its order.
        const line = linesFor('log-1')[0]!;
        const keys = ['level', 'time', 'pid', 'hostname', 'reqId', 'method', 'url', 'status', 'ms', 'tokenId', 'msg'];
        assert.deepEqual(Object.keys(line), keys);
        assert.deepEqual(
          [line.level, line.pid, line.method, line.url, line.status],
          [30, process.pid, 'POST', '/plants', 200],
        );
        assert.ok(typeof line.time === 'number' && typeof line.ms === 'number' && typeof line.tokenId === 'string');
        assert.equal(linesFor('log-3')[0]!.tokenId, undefined, 'a refused credential names no token');

        const all = server.logs.join('\n');
        for (const secret of [t, q, other, t.slice(4), Buffer.from(`u:${t}`).toString('base64')]) {
          assert.ok(!all.includes(secret), `the log contains a credential: ${secret.slice(0, 8)}…`);
        }
        for (const line of server.logs) assert.doesNotThrow(() => JSON.parse(line), `not a JSON line: ${line}`);
      });
    });

    describe('logs: requests the router never sees', () => {
      it('a request with a bad percent-encoding still gets exactly one "request" line with its reqId', async () => {
        const r = await send(server, {
          path: `/plants%zz?access_token=${server.token}`,
          headers: { 'x-request-id': 'log-bad-url', authorization: `Bearer ${server.token}` },
        });
        assert.equal(r.status, 400, r.text);
        assert.equal(r.headers['x-request-id'], 'log-bad-url');
        const count = () =>
          server.logs.filter((l) => {
            const e = JSON.parse(l) as { msg?: string; reqId?: string };
            return e.msg === 'request' && e.reqId === 'log-bad-url';
          }).length;
        await eventually(async () => count() >= 1, 1000);
        assert.equal(count(), 1, 'one JSON line per request, with the request id');
        assert.ok(!server.logs.join('\n').includes(server.token));
      });
    });

    function withAuthId(id: string, authorization: string, path: string) {
      return send(server, {
        method: 'POST',
        path,
        headers: { authorization, 'content-type': 'application/json', 'x-request-id': id },
        body: plantBody(),
      });
    }
  });
}
