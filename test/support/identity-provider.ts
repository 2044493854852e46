import { once } from 'node:events';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { exportJWK, generateKeyPair, SignJWT, type CryptoKey, type JWK, type JWTPayload } from 'jose';

export const ISSUER = 'https://idp.test/';
export const AUDIENCE = 'plant-store-test';

export type Algorithm = 'RS256' | 'ES256' | 'EdDSA';

export interface SigningKey {
  alg: Algorithm;
  kid: string;
  privateKey: CryptoKey;
  publicKey: CryptoKey;
  jwk: JWK;
}

export async function newKey(alg: Algorithm, kid: string): Promise<SigningKey> {
  const { privateKey, publicKey } = await generateKeyPair(alg, {
    extractable: true,
    ...(alg === 'EdDSA' && { crv: 'Ed25519' }),
  });
  const jwk = { ...(await exportJWK(publicKey)), kid, alg, use: 'sig' };
  return { alg, kid, privateKey, publicKey, jwk };
}

export interface TokenOptions {
  claims?: JWTPayload;
  issuer?: string;
  audience?: string;
  subject?: string;
  /** Seconds from now; negative for the past. Undefined: one hour. Null: no `exp` at all. */
  expiresIn?: number | null;
  notBefore?: number;
}

/** An access token as an identity provider issues it, signed with `key`. */
export async function signToken(key: SigningKey, options: TokenOptions = {}): Promise<string> {
  const now = Math.floor(Date.now() / 1000);
  const jwt = new SignJWT(options.claims ?? {})
    .setProtectedHeader({ alg: key.alg, kid: key.kid, typ: 'JWT' })
    .setIssuer(options.issuer ?? ISSUER)
    .setAudience(options.audience ?? AUDIENCE)
    .setSubject(options.subject ?? 'alice')
    .setIssuedAt(now);
  if (options.expiresIn !== null) jwt.setExpirationTime(now + (options.expiresIn ?? 3600));
  if (options.notBefore !== undefined) jwt.setNotBefore(now + options.notBefore);
  return jwt.sign(key.privateKey);
}

export interface JwksServer {
  url: string;
  /** The keys it publishes; replace to rotate. */
  keys: SigningKey[];
  /** How many times the JWKS was fetched. */
  fetches: number;
  close(): Promise<void>;
}

/** The settings of JWT mode that trust `jwks` (and JWT_JWKS_COOLDOWN_MS, when given). */
export const jwtEnv = (jwks: JwksServer, cooldownMs?: number): Record<string, string> => ({
  JWT_JWKS_URL: jwks.url,
  JWT_ISSUER: ISSUER,
  JWT_AUDIENCE: AUDIENCE,
  ...(cooldownMs !== undefined && { JWT_JWKS_COOLDOWN_MS: String(cooldownMs) }),
});

/** A JWKS endpoint on 127.0.0.1, as an identity provider publishes its signing keys. */
export async function startJwksServer(keys: SigningKey[]): Promise<JwksServer> {
  const state: JwksServer = { url: '', keys, fetches: 0, close: async () => {} };
  const server: Server = createServer((req, res) => {
    if (req.url !== '/.well-known/jwks.json') {
      res.writeHead(404).end();
      return;
    }
    state.fetches++;
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end(JSON.stringify({ keys: state.keys.map((k) => k.jwk) }));
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  state.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/.well-known/jwks.json`;
  state.close = () =>
    new Promise((resolve) => {
      server.close(() => resolve());
      server.closeAllConnections();
    });
  return state;
}
