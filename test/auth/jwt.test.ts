// JWT mode: access tokens of an identity provider, verified against its JWKS,
// served here by a local JWKS endpoint with keys made by jose. Every response is also checked
// against the OpenAPI document by send().
// SQLite only: a JWT is verified without the store, and the requests it admits are the same
// ones the store-parameterised HTTP suites cover.
import assert from 'node:assert/strict';
import { createHmac } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { after, before, describe, it } from 'node:test';
import { exportSPKI } from 'jose';
import { CLOCK_TOLERANCE_S } from '../../src/auth/jwt.js';
import { TICKET_TTL_MS } from '../../src/domain/ticket.js';
import { buildTestApp, type TestApp } from '../helper.js';
import { send, type RawResponse, type Target } from '../support/http.js';
import {
  AUDIENCE,
  ISSUER,
  jwtEnv,
  newKey,
  signToken,
  startJwksServer,
  type JwksServer,
  type SigningKey,
} from '../support/identity-provider.js';

let nextId = 1;
const post = (url: Target, token: string) =>
  send(url, {
    method: 'POST',
    path: '/plants',
    headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
    body: `{"id":${nextId++},"name":"jwt"}`,
  });
const get = (url: Target, token: string, path = '/plants') =>
  send(url, { path, headers: { authorization: `Bearer ${token}` } });

function assertInvalidToken(r: RawResponse, what: string): void {
  assert.equal(r.status, 401, `${what}: ${r.status} ${r.text}`);
  assert.equal((r.json as { error: number }).error, 401);
  assert.match(String(r.headers['www-authenticate']), /^Bearer realm="plant-store", error="invalid_token"$/, what);
}

const b64 = (value: unknown) => Buffer.from(JSON.stringify(value)).toString('base64url');

describe('JWT mode', () => {
  let jwks: JwksServer;
  let server: TestApp;
  let keys: Record<'RS256' | 'ES256' | 'EdDSA', SigningKey>;
  let stranger: SigningKey;

  before(async () => {
    keys = {
      RS256: await newKey('RS256', 'rsa-1'),
      ES256: await newKey('ES256', 'ec-1'),
      EdDSA: await newKey('EdDSA', 'ed-1'),
    };
    stranger = await newKey('RS256', 'rsa-1'); // same kid as a real key, another key
    jwks = await startJwksServer(Object.values(keys));
    // A long cooldown: once fetched, the keys are not fetched again within this test.
    server = await buildTestApp({ logs: true, env: jwtEnv(jwks, 600_000) });
  });
  after(async () => {
    await server?.close();
    await jwks?.close();
  });

  it('accepts RS256, ES256 and EdDSA tokens, with scopes from `scope` or `scp`', async () => {
    const rs = await signToken(keys.RS256, { claims: { scope: 'plants:read plants:write' } });
    assert.equal((await post(server, rs)).status, 200);
    assert.equal((await get(server, rs)).status, 200);

    const es = await signToken(keys.ES256, { claims: { scp: ['plants:read'] } });
    assert.equal((await get(server, es)).status, 200);
    const denied = await post(server, es);
    assert.equal(denied.status, 403, denied.text);
    assert.match(String(denied.headers['www-authenticate']), /error="insufficient_scope", scope="plants:write"/);

    const ed = await signToken(keys.EdDSA, { claims: { scp: 'plants:write metrics:read' } });
    assert.equal((await post(server, ed)).status, 200);
    assert.equal((await get(server, ed)).status, 403, 'scp "plants:write metrics:read" has no plants:read');
    const metrics = await get(server, ed, '/metrics');
    assert.equal(metrics.status, 200, metrics.text);

    const none = await signToken(keys.ES256, { claims: { scope: 'openid profile' } });
    assert.equal((await get(server, none)).status, 403, 'scopes the service does not know grant nothing');
  });

  it('tolerates a small clock difference on exp and nbf (30 s)', async () => {
    const justExpired = await signToken(keys.RS256, { claims: { scope: 'plants:read' }, expiresIn: -10 });
    assert.equal((await get(server, justExpired)).status, 200);
    const almostValid = await signToken(keys.RS256, { claims: { scope: 'plants:read' }, notBefore: 10 });
    assert.equal((await get(server, almostValid)).status, 200);
  });

  it('refuses every forged, foreign or stale token with 401 invalid_token', async () => {
    const scope = { scope: 'plants:read plants:write' };
    const valid = await signToken(keys.RS256, { claims: scope });
    const [header, payload, signature] = valid.split('.') as [string, string, string];
    const spki = await exportSPKI(keys.RS256.publicKey);
    const hsHeader = b64({ alg: 'HS256', kid: 'rsa-1', typ: 'JWT' });
    const confused = `${hsHeader}.${payload}`;
    const cases: [string, string][] = [
      ['alg none', `${b64({ alg: 'none', typ: 'JWT' })}.${payload}.`],
      ['alg none with the kid of a real key', `${b64({ alg: 'none', kid: 'rsa-1' })}.${payload}.`],
      [
        'HS256 "signed" with the public key',
        `${confused}.${createHmac('sha256', spki).update(confused).digest('base64url')}`,
      ],
      ['a wrong issuer', await signToken(keys.RS256, { claims: scope, issuer: 'https://evil.test/' })],
      ['a wrong audience', await signToken(keys.ES256, { claims: scope, audience: 'another-service' })],
      ['expired past the tolerance', await signToken(keys.EdDSA, { claims: scope, expiresIn: -120 })],
      ['not valid yet past the tolerance', await signToken(keys.RS256, { claims: scope, notBefore: 300 })],
      ['without exp', await signToken(keys.RS256, { claims: scope, expiresIn: null })],
      ['an unknown kid', await signToken({ ...stranger, kid: 'nobody' }, { claims: scope })],
      ['a known kid, another key', await signToken(stranger, { claims: scope })],
      [
        'a tampered payload',
        `${header}.${b64({ ...JSON.parse(Buffer.from(payload, 'base64url').toString()), sub: 'mallory' })}.${signature}`,
      ],
      [
        'a tampered signature',
        `${header}.${payload}.${signature.slice(0, -4)}${signature.slice(-4) === 'AAAA' ? 'BBBB' : 'AAAA'}`,
      ],
      ['no signature', `${header}.${payload}.`],
      ['garbage in JWT shape', 'eyJhbGciOiJSUzI1NiJ9.bm90IGpzb24.c2ln'],
    ];
    for (const [what, token] of cases) {
      assertInvalidToken(await post(server, token), what);
      assertInvalidToken(await get(server, token), what);
    }
    assert.equal((await post(server, valid)).status, 200, 'the untampered token is accepted');
  });

  it('fetches the JWKS once: unknown kids within the cooldown do not make it fetch again', async () => {
    const fetched = jwks.fetches;
    assert.ok(fetched >= 1);
    for (let i = 0; i < 10; i++) {
      const forged = await signToken({ ...stranger, kid: `unknown-${i}` }, { claims: { scope: 'plants:read' } });
      assertInvalidToken(await get(server, forged), `unknown kid ${i}`);
    }
    assert.equal(jwks.fetches, fetched, 'a stream of unknown kids must not reach the identity provider');
  });

  it('keeps managed pst_ tokens working alongside JWTs', async () => {
    assert.equal((await post(server, server.token)).status, 200);
  });

  it('gives a stream ticket made with a JWT no longer than the JWT is accepted', async () => {
    const post = (token: string) =>
      server.inject({ method: 'POST', path: '/plants/changes/tickets', headers: { authorization: `Bearer ${token}` } });
    const scope = { scope: 'plants:read' };
    // Accepted until its exp and the clock tolerance: 10 s + 30 s, far short of a ticket's 5 minutes.
    const soon = await signToken(keys.ES256, { claims: scope, expiresIn: 10 });
    const r = await post(soon);
    assert.equal(r.status, 201, r.text);
    const exp = JSON.parse(Buffer.from(soon.split('.')[1]!, 'base64url').toString()) as { exp: number };
    const expiresAt = Date.parse((r.json as { expiresAt: string }).expiresAt);
    assert.equal(expiresAt, (exp.exp + CLOCK_TOLERANCE_S) * 1000);
    // A JWT good for an hour: the ticket's own 5 minutes.
    const long = await post(await signToken(keys.ES256, { claims: scope }));
    const lasts = Date.parse((long.json as { expiresAt: string }).expiresAt) - Date.now();
    assert.ok(lasts > TICKET_TTL_MS - 5000 && lasts <= TICKET_TTL_MS, `${lasts} ms`);
  });

  it('never logs a JWT', async () => {
    const token = await signToken(keys.ES256, { claims: { scope: 'plants:read' }, subject: 'log-check' });
    assert.equal((await get(server, token)).status, 200);
    await sleep(100);
    const log = server.logs.join('\n');
    assert.ok(!log.includes(token.split('.')[2]!), 'the log contains a JWT signature');
    assert.ok(log.includes('"sub":"log-check"'), 'the log names the subject');
  });
});

describe('JWT mode: key rotation', () => {
  it('picks up a new signing key once the cooldown has passed, and answers 503 when the keys cannot be fetched', async () => {
    const first = await newKey('ES256', 'rotation-1');
    const second = await newKey('EdDSA', 'rotation-2');
    const jwks = await startJwksServer([first]);
    const server = await buildTestApp({ env: jwtEnv(jwks, 300) });
    try {
      const scope = { scope: 'plants:read' };
      assert.equal((await get(server, await signToken(first, { claims: scope }))).status, 200);

      jwks.keys = [second]; // the provider rotates: the old key is withdrawn, a new one published
      const fresh = await signToken(second, { claims: scope });
      let last: RawResponse | undefined;
      for (let i = 0; i < 50 && last?.status !== 200; i++) {
        last = await get(server, fresh);
        if (last.status !== 200) await sleep(100);
      }
      assert.equal(last?.status, 200, `the new key was not picked up: ${last?.text}`);
      const stale = await get(server, await signToken(first, { claims: scope }));
      assertInvalidToken(stale, 'a token of the withdrawn key');

      // The provider goes away: a token naming a key not seen yet cannot be checked.
      await jwks.close();
      const third = await newKey('RS256', 'rotation-3');
      const unknown = await signToken(third, { claims: scope });
      for (let i = 0; i < 50 && last?.status !== 503; i++) {
        last = await get(server, unknown);
        if (last.status !== 503) await sleep(100);
      }
      assert.equal(last?.status, 503, last?.text);
      assert.ok(Number(last?.headers['retry-after']) >= 1);
      assert.equal((await get(server, fresh)).status, 200, 'keys already fetched keep working');
    } finally {
      await server.close();
      await jwks.close();
    }
  });
});

describe('JWT mode: a JWKS file', () => {
  it('verifies tokens against keys read from JWT_JWKS_FILE', async () => {
    const key = await newKey('RS256', 'file-1');
    const dir = mkdtempSync(join(tmpdir(), 'plant-store-jwks-'));
    const file = join(dir, 'jwks.json');
    writeFileSync(file, JSON.stringify({ keys: [key.jwk] }));
    const server = await buildTestApp({ env: { JWT_JWKS_FILE: file, JWT_ISSUER: ISSUER, JWT_AUDIENCE: AUDIENCE } });
    try {
      assert.equal((await get(server, await signToken(key, { claims: { scope: 'plants:read' } }))).status, 200);
      const other = await newKey('RS256', 'file-2');
      assertInvalidToken(await get(server, await signToken(other, { claims: { scope: 'plants:read' } })), 'other key');
    } finally {
      await server.close();
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
