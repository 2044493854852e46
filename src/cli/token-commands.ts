import type { Command } from 'commander';
import {
  isActive,
  MAX_TOKEN_LIFETIME_MS,
  parseDuration,
  SCOPES,
  shownPrefix,
  type Scope,
  type TokenRecord,
} from '../domain/token.js';
import { scopesProblem, tokenNameProblem } from '../domain/token-rules.js';
import { createToken } from '../use-cases/create-token.js';
import { revokeToken } from '../use-cases/revoke-token.js';
import type { CliIo } from './io.js';
import { fail, outputIsTheProduct, printJson } from './output.js';
import { printTable } from './table.js';
import { withServices } from './with-services.js';

/** Every item of every --scope, empty ones included, so `--scope ''` is refused rather than dropped. */
const collect = (value: string, previous: string[] = []) => [...previous, ...value.split(',').map((s) => s.trim())];

export function tokenCommands(program: Command, io: CliIo): void {
  const token = program.command('token').description('manage API tokens');

  token
    .command('create')
    .description('create a token and print it, alone, on stdout (it is never shown again)')
    .requiredOption('--name <name>', 'what the token is for')
    .option('--scope <scope>', `a scope to grant, repeatable (${SCOPES.join(', ')}); default: all`, collect)
    .option('--expires-in <duration>', 'lifetime such as 30d, 12h, 90m, 2w, at most 3650d (10 years); default: never')
    .action(async (opts: { name: string; scope?: string[]; expiresIn?: string }) => {
      // The rules of every stored token, checked here too so that bad input opens no store.
      const name = opts.name.trim();
      const nameProblem = tokenNameProblem(name);
      if (nameProblem !== undefined) fail(`--name ${nameProblem}`);
      if (opts.scope?.includes(''))
        fail(`--scope needs a scope name (${SCOPES.join(', ')}); an empty one grants nothing`);
      const scopeProblem = opts.scope && scopesProblem([...new Set(opts.scope)]);
      if (scopeProblem) fail(`--scope ${scopeProblem}`);
      let expiresAt: Date | null = null;
      if (opts.expiresIn !== undefined) {
        const ms = parseDuration(opts.expiresIn);
        if (ms === undefined)
          fail(
            `--expires-in must be a whole number from 1 with a unit (s, m, h, d or w), like 30d, 12h, 90m or 2w (got "${opts.expiresIn}")`,
          );
        if (ms > MAX_TOKEN_LIFETIME_MS) {
          fail(`--expires-in must be at most 3650d (10 years; 521w, 87600h) (got "${opts.expiresIn}")`);
        }
        expiresAt = new Date(Date.now() + ms);
      }
      const created = await withServices(io, ({ store }) =>
        createToken(store, { name, scopes: opts.scope as Scope[] | undefined, expiresAt }),
      );
      // Shown only this once: a reader gone before it has it has a token nobody holds.
      outputIsTheProduct(io.stdout, 'the new token', `it was created: revoke it (token revoke ${created.record.id})`);
      io.stdout.write(`${created.token}\n`);
    });

  token
    .command('list')
    .description('list tokens (never the tokens themselves)')
    .option('--json', 'one JSON array of token objects')
    .action(async (opts: { json?: boolean }) => {
      const tokens = await withServices(io, ({ store }) => store.tokens.list());
      if (opts.json) {
        printJson(io, tokens.map(view));
        return;
      }
      const rows = tokens.map((t) => {
        const v = view(t);
        return [
          v.id,
          v.name,
          v.scopes.join(','),
          v.prefix === null ? '(own value)' : `${v.prefix}…`,
          v.created,
          v.expires ?? '-',
          v.revoked ?? '-',
          v.status,
        ];
      });
      printTable(io.stdout, ['ID', 'NAME', 'SCOPES', 'PREFIX', 'CREATED', 'EXPIRES', 'REVOKED', 'STATUS'], rows);
    });

  token
    .command('revoke')
    .description('revoke a token; running servers refuse it within a second (revoking it again changes nothing)')
    .argument('<id>', 'the token id shown by token list')
    .action(async (id: string) => {
      const message = await withServices(io, async ({ store }) => {
        const known = (await store.tokens.list()).find((t) => t.id === id);
        if (known?.revokedAt)
          return `token ${id} was already revoked at ${known.revokedAt.toISOString()}; nothing changed`;
        await revokeToken(store, id);
        return `revoked ${id}`;
      });
      io.stdout.write(`${message}\n`);
    });
}

function view(t: TokenRecord) {
  return {
    id: t.id,
    name: t.name,
    scopes: t.scopes,
    /** null for a token whose value the operator chose: no part of it is shown. */
    prefix: shownPrefix(t.prefix),
    created: t.createdAt.toISOString(),
    expires: t.expiresAt?.toISOString() ?? null,
    revoked: t.revokedAt?.toISOString() ?? null,
    status: t.revokedAt ? 'revoked' : isActive(t) ? 'active' : 'expired',
  };
}
