import { readFileSync } from 'node:fs';
import { Command, Option } from 'commander';
import { ConfigError, loadConfig, type Flags, type SettingKey } from '../config/config.js';
import { flagHelp } from '../config/docs.js';
import { SETTINGS } from '../config/settings.js';
import { StoreUnavailableError } from '../domain/errors.js';
import { createServices } from '../services.js';
import { backupCommands } from './backup-commands.js';
import { migrateCommand } from './migrate-command.js';
import { fail, quietOnClosedPipe } from './output.js';
import { tokenCommands } from './token-commands.js';
import { webhookCommands } from './webhook-commands.js';
import { wholeStoreCommands } from './whole-store-commands.js';

quietOnClosedPipe();

const program = new Command('plant-store').description('The Plant Store service and its administration commands.');
// The installed package's version, read when the command runs (dist/cli/ is two levels down).
const { version } = JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as {
  version: string;
};
program.version(version, '-V, --version', 'print the version and exit');

// Every setting with a flag in the settings table becomes an option of `serve`; its value wins
// over the variable.
const serveCommand = program.command('serve').description('run the HTTP server (what npm start runs)');
const flagKeys = new Map<string, SettingKey>();
for (const [key, s] of Object.entries(SETTINGS) as [SettingKey, (typeof SETTINGS)[SettingKey]][]) {
  if (!s.flag) continue;
  const option = new Option(s.flag, flagHelp(s));
  flagKeys.set(option.attributeName(), key);
  serveCommand.addOption(option);
}
serveCommand.action(async (opts: Record<string, string>) => {
  const flags: Flags = {};
  for (const [attribute, value] of Object.entries(opts)) flags[flagKeys.get(attribute)!] = value;
  const config = loadConfig(process.env, flags);
  // The HTTP server is loaded by the command that serves only: the others start faster without it.
  const { serve } = await import('../http/server.js');
  await serve(await createServices(config));
});

migrateCommand(program);
tokenCommands(program);
backupCommands(program);
webhookCommands(program);
wholeStoreCommands(program);

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
