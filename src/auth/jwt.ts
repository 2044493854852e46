import { readFileSync } from 'node:fs';
import type { JSONWebKeySet, JWTPayload, JWTVerifyGetKey } from 'jose';
import { ConfigError, type JwtConfig } from '../config/config.js';
import { SCOPES, type Scope } from '../domain/token.js';

/** The only signature algorithms accepted: `none`, HMAC (HS*) and anything else are refused. */
export const JWT_ALGORITHMS = ['RS256', 'ES256', 'EdDSA'];
/** Seconds of clock difference with the identity provider tolerated on `exp` and `nbf`. */
export const CLOCK_TOLERANCE_S = 30;

/** Who a verified access token speaks for. */
export interface JwtPrincipal {
  subject: string | undefined;
  scopes: Scope[];
  /** When it stops being accepted: its `exp`, with the clock tolerance. */
  acceptedUntil: Date;
}

/** Why a token was not accepted: the token is at fault (401), or its keys could not be had (503). */
export class JwtRejected extends Error {
  constructor(
    message: string,
    readonly keysUnavailable = false,
  ) {
    super(message);
    this.name = 'JwtRejected';
  }
}

export type VerifyJwt = (token: string) => Promise<JwtPrincipal>;

/** A JWT has three base64url parts; a managed token or a PLANT_STORE_TOKEN value does not. */
export function looksLikeJwt(token: string): boolean {
  return /^[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]*$/.test(token);
}

/** Scopes from `scope` (space-separated, RFC 8693/9068) or `scp` (an array or a string); unknown ones are dropped. */
export function scopesOf(payload: JWTPayload): Scope[] {
  const raw = payload.scope ?? payload.scp;
  const names = typeof raw === 'string' ? raw.split(' ') : Array.isArray(raw) ? raw : [];
  return SCOPES.filter((s) => names.includes(s));
}

type Jose = typeof import('jose');

function keySet({ createLocalJWKSet, createRemoteJWKSet }: Jose, config: JwtConfig): JWTVerifyGetKey {
  if (config.jwksUrl) {
    // Keys are cached; a token naming an unknown `kid` forces a fetch, but at most one per
    // cooldown, so a stream of forged `kid`s cannot turn the service against the provider.
    return createRemoteJWKSet(new URL(config.jwksUrl), {
      cooldownDuration: config.jwksCooldownMs,
      cacheMaxAge: 10 * 60_000,
      timeoutDuration: 5_000,
    });
  }
  let jwks: JSONWebKeySet;
  try {
    jwks = JSON.parse(readFileSync(config.jwksFile!, 'utf8')) as JSONWebKeySet;
    return createLocalJWKSet(jwks);
  } catch (err) {
    throw new ConfigError(`JWT_JWKS_FILE must be a readable JSON Web Key Set (${(err as Error).message})`);
  }
}

/** Failures to obtain the keys (provider down, slow, or answering garbage), as opposed to a bad token. */
function isKeyFetchFailure({ errors }: Jose, err: unknown): boolean {
  if (!(err instanceof errors.JOSEError)) return true;
  return err instanceof errors.JWKSTimeout || err instanceof errors.JWKSInvalid || err.code === 'ERR_JOSE_GENERIC';
}

function reason({ errors }: Jose, err: unknown): string {
  if (err instanceof errors.JWTExpired) return 'the bearer token has expired';
  if (err instanceof errors.JWTClaimValidationFailed) {
    if (err.claim === 'nbf') return 'the bearer token is not valid yet';
    if (err.claim === 'iss' || err.claim === 'aud') return `the bearer token is not for this service (${err.claim})`;
    return `the bearer token's ${err.claim} claim is not valid`;
  }
  if (err instanceof errors.JOSEAlgNotAllowed)
    return `the bearer token's algorithm is not accepted (${JWT_ALGORITHMS.join(', ')})`;
  if (err instanceof errors.JWKSNoMatchingKey) return 'the bearer token was signed with an unknown key';
  return 'the bearer token is not valid';
}

/**
 * JWT mode: access tokens from the operator's identity provider, checked
 * against its JWKS with issuer, audience, expiry and not-before. The algorithm allow-list is
 * what refuses `alg: none` and algorithm confusion (an HS256 token "signed" with a public key).
 */
export async function createJwtVerifier(config: JwtConfig): Promise<VerifyJwt> {
  // Loaded only in JWT mode: deployments without it do not pay for it at start.
  const jose = await import('jose');
  const { jwtVerify } = jose;
  const keys = keySet(jose, config);
  return async (token) => {
    try {
      const { payload } = await jwtVerify(token, keys, {
        algorithms: JWT_ALGORITHMS,
        issuer: config.issuer,
        audience: config.audience,
        clockTolerance: CLOCK_TOLERANCE_S,
        requiredClaims: ['exp'],
      });
      return {
        subject: typeof payload.sub === 'string' ? payload.sub : undefined,
        scopes: scopesOf(payload),
        acceptedUntil: new Date((payload.exp! + CLOCK_TOLERANCE_S) * 1000),
      };
    } catch (err) {
      if (isKeyFetchFailure(jose, err)) throw new JwtRejected('the identity provider keys could not be fetched', true);
      throw new JwtRejected(reason(jose, err));
    }
  };
}
