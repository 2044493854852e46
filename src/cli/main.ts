#!/usr/bin/env node
import { Command } from 'commander';
import { ConfigError, loadConfig, type ServeFlags } from '../config.js';
import { serve } from '../server.js';
import { StoreUnavailableError } from '../store/store.js';
import { backupCommands } from './backup-commands.js';
import { migrateCommand } from './migrate-command.js';
import { tokenCommands } from './token-commands.js';
import { webhookCommands } from './webhook-commands.js';
import { fail } from './output.js';

const program = new Command('plant-store').description('The Plant Store service and its administration commands.');

program
  .command('serve')
  .description('run the HTTP server (what npm start runs)')
  .option('--port <n>', 'port to listen on (default: $PORT or 3000)')
  .option('--host <h>', 'address to listen on (default: $HOST or 0.0.0.0)')
  .option('--jwks-url <url>', "JWT mode: the identity provider's JWKS URL (default: $JWT_JWKS_URL)")
  .option('--jwks-file <path>', 'JWT mode: a JWKS file instead of a URL (default: $JWT_JWKS_FILE)')
  .option('--issuer <iss>', 'JWT mode: the issuer tokens must name (default: $JWT_ISSUER)')
  .option('--audience <aud>', 'JWT mode: the audience tokens must name (default: $JWT_AUDIENCE)')
  .action(async (opts: ServeFlags) => {
    await serve(loadConfig(process.env, opts));
  });

migrateCommand(program);
tokenCommands(program);
backupCommands(program);
webhookCommands(program);

program.parseAsync().catch((err: unknown) => {
  if (err instanceof ConfigError) fail(`invalid configuration: ${err.message}`);
  if (err instanceof StoreUnavailableError) fail(`the store is unavailable: ${reason(err.cause)}`);
  fail(err instanceof Error ? err.message : String(err));
});

/** The operator's one line on why the database could not be reached (never the URL, so never a password). */
function reason(cause: unknown): string {
  if (cause instanceof AggregateError && cause.errors.length) return reason(cause.errors[0]);
  if (cause instanceof Error) return cause.message || String((cause as { code?: unknown }).code ?? cause.name);
  return String(cause);
}
