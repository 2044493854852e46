import type { Command } from 'commander';
import { isActive, parseDuration, SCOPES, type Scope, type TokenRecord } from '../domain/token.js';
import { createToken } from '../use-cases/create-token.js';
import { revokeToken } from '../use-cases/revoke-token.js';
import { fail } from './output.js';
import { printTable } from './table.js';
import { withServices } from './with-services.js';

const collect = (value: string, previous: string[] = []) => [...previous, ...value.split(',').filter(Boolean)];

export function tokenCommands(program: Command): void {
  const token = program.command('token').description('manage API tokens');

  token
    .command('create')
    .description('create a token and print it, alone, on stdout (it is never shown again)')
    .requiredOption('--name <name>', 'what the token is for')
    .option('--scope <scope>', `a scope to grant, repeatable (${SCOPES.join(', ')}); default: all`, collect)
    .option('--expires-in <duration>', 'lifetime such as 30d, 12h, 90m, 2w; default: never expires')
    .action(async (opts: { name: string; scope?: string[]; expiresIn?: string }) => {
      const name = opts.name.trim();
      if (!name || name.length > 200) fail('--name must be 1 to 200 characters');
      const unknown = opts.scope?.find((s) => !(SCOPES as readonly string[]).includes(s));
      if (unknown !== undefined) fail(`unknown scope "${unknown}"; scopes are ${SCOPES.join(', ')}`);
      let expiresAt: Date | null = null;
      if (opts.expiresIn !== undefined) {
        const ms = parseDuration(opts.expiresIn);
        if (ms === undefined) fail(`--expires-in must look like 30d, 12h, 90m, 3600s or 2w (got "${opts.expiresIn}")`);
        expiresAt = new Date(Date.now() + ms);
      }
      const created = await withServices(({ store }) =>
        createToken(store, { name, scopes: opts.scope as Scope[] | undefined, expiresAt }),
      );
      process.stdout.write(`${created.token}\n`);
    });

  token
    .command('list')
    .description('list tokens (never the tokens themselves)')
    .option('--json', 'one JSON object per line')
    .action(async (opts: { json?: boolean }) => {
      const tokens = await withServices(({ store }) => store.listTokens());
      if (opts.json) {
        for (const t of tokens) process.stdout.write(`${JSON.stringify(view(t))}\n`);
        return;
      }
      const rows = tokens.map((t) => {
        const v = view(t);
        return [
          v.id,
          v.name,
          v.scopes.join(','),
          `${v.prefix}…`,
          v.created,
          v.expires ?? '-',
          v.revoked ?? '-',
          v.status,
        ];
      });
      printTable(['ID', 'NAME', 'SCOPES', 'PREFIX', 'CREATED', 'EXPIRES', 'REVOKED', 'STATUS'], rows);
    });

  token
    .command('revoke')
    .description('revoke a token; running servers refuse it within a second')
    .argument('<id>', 'the token id shown by token list')
    .action(async (id: string) => {
      await withServices(({ store }) => revokeToken(store, id));
      process.stdout.write(`revoked ${id}\n`);
    });
}

function view(t: TokenRecord) {
  return {
    id: t.id,
    name: t.name,
    scopes: t.scopes,
    prefix: t.prefix,
    created: t.createdAt.toISOString(),
    expires: t.expiresAt?.toISOString() ?? null,
    revoked: t.revokedAt?.toISOString() ?? null,
    status: t.revokedAt ? 'revoked' : isActive(t) ? 'active' : 'expired',
  };
}
