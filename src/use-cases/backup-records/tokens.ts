import type { Scope, TokenRecord } from '../../domain/token.js';
import { tokenProblem } from '../../domain/token-rules.js';
import { writeJson } from '../../json/write-json.js';
import {
  recordCheck,
  RecordProblem,
  TIME,
  TIME_OR_NULL,
  type BackupRecords,
  type RecordSchema,
} from './record-kind.js';

/** A token's line, as the file writes it. */
interface TokenLine {
  type: 'token';
  id: string;
  name: string;
  hash: string;
  prefix: string;
  scopes: string[];
  createdAt: string;
  expiresAt: string | null;
  revokedAt: string | null;
}

const A_STRING = { type: 'string', description: 'a string' } as const;

/** What a schema can say of a token's line; the rest is the rules of every token (domain/token-rules.ts). */
const SCHEMA: RecordSchema<TokenLine> = {
  type: 'object',
  properties: {
    type: { type: 'string', const: 'token' },
    id: A_STRING,
    name: A_STRING,
    hash: A_STRING,
    prefix: A_STRING,
    scopes: { type: 'array', items: { type: 'string' }, description: 'a list of strings' },
    createdAt: TIME,
    expiresAt: TIME_OR_NULL,
    revokedAt: TIME_OR_NULL,
  },
  required: ['type', 'id', 'name', 'hash', 'prefix', 'scopes', 'createdAt', 'expiresAt', 'revokedAt'],
  additionalProperties: false,
};

const date = (text: string | null) => (text === null ? null : new Date(text));

/**
 * Tokens, as stored: the hash, never a token itself. A token read back is held to the rules
 * `token create` holds the ones it makes to (domain/token-rules.ts), the same function.
 */
export const tokenRecords: BackupRecords<'tokens'> = {
  kind: 'tokens',
  type: 'token',
  noun: 'token',
  line: (t) =>
    writeJson({
      type: 'token',
      id: t.id,
      name: t.name,
      hash: t.hash,
      prefix: t.prefix,
      scopes: t.scopes,
      createdAt: t.createdAt.toISOString(),
      expiresAt: t.expiresAt?.toISOString() ?? null,
      revokedAt: t.revokedAt?.toISOString() ?? null,
    } satisfies TokenLine),
  async reader() {
    const check = await recordCheck(SCHEMA, 'a token');
    const ids = new Set<string>();
    const hashes = new Set<string>();
    return (o) => {
      const line = check(o);
      const token: TokenRecord = {
        id: line.id,
        name: line.name,
        hash: line.hash,
        prefix: line.prefix,
        scopes: line.scopes as Scope[],
        createdAt: new Date(line.createdAt),
        expiresAt: date(line.expiresAt),
        revokedAt: date(line.revokedAt),
      };
      const problem = tokenProblem(token);
      if (problem !== undefined) throw new RecordProblem(`a token's "${problem.field}" ${problem.problem}`);
      if (ids.has(token.id)) throw new RecordProblem(`a second token with id "${token.id}"`);
      if (hashes.has(token.hash)) throw new RecordProblem(`a second token with the same hash`);
      ids.add(token.id);
      hashes.add(token.hash);
      return token;
    };
  },
};
