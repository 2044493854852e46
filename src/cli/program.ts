import { readFileSync } from 'node:fs';
import { Command, CommanderError, Help, Option } from 'commander';
import { ConfigError, loadConfig, type Flags, type SettingKey } from '../config/config.js';
import { flagHelp } from '../config/docs.js';
import { SETTINGS } from '../config/settings.js';
import { StoreUnavailableError } from '../domain/errors.js';
import { createServices } from '../services.js';
import { backupCommands } from './backup-commands.js';
import { keepHeapSmall } from './heap.js';
import { CliExit, type CliIo } from './io.js';
import { migrateCommand } from './migrate-command.js';
import { oneLine } from './output.js';
import { tokenCommands } from './token-commands.js';
import { webhookCommands } from './webhook-commands.js';
import { wholeStoreCommands } from './whole-store-commands.js';

// The installed package's version, read when the command runs (dist/cli/ is two levels down).
const { version } = JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as {
  version: string;
};

const STORE_HELP = `
Environment:
  DATABASE_URL  the store: sqlite:<path> or postgres://user@host/database[?schema=name]
                (default: ${SETTINGS.databaseUrl.default}); only serve, migrate and
                restore create a store that does not exist yet
`;

/**
 * Runs `plant-store <argv>` with these streams and environment; resolves to the exit status. A
 * failure is one line on stderr, `plant-store: …`, whatever raised it.
 */
export async function runProgram(argv: string[], io: CliIo): Promise<number> {
  try {
    await buildProgram(io).parseAsync(argv, { from: 'user' });
    return 0;
  } catch (err) {
    // Usage errors, --help and --version: commander has written what it had to say.
    if (err instanceof CommanderError) return err.exitCode;
    const line = failureLine(err);
    if (line) io.stderr.write(`plant-store: ${oneLine(line)}\n`);
    return err instanceof CliExit ? err.code : 1;
  }
}

function buildProgram(io: CliIo): Command {
  const program = new Command('plant-store')
    .description('The Plant Store service and its administration commands.')
    // Set before the subcommands are added, which inherit them.
    .exitOverride()
    .configureOutput({
      writeOut: (s) => io.stdout.write(s),
      writeErr: (s) => io.stderr.write(s),
      // commander's usage errors (`error: required option…`, an unknown command and its
      // suggestion) in the one style of every failure: one line, `plant-store: …`.
      outputError: (s, write) =>
        write(
          `plant-store: ${oneLine(
            s
              .replace(/^error: /, '')
              .trim()
              .replace(/\s*\n\s*/g, ' '),
          )}\n`,
        ),
    })
    .configureHelp({
      optionDescription(option) {
        const text = Help.prototype.optionDescription.call(this, option);
        return option.mandatory ? `${text} (required)` : text;
      },
    })
    // Shown by every command's --help.
    .addHelpText('afterAll', STORE_HELP);
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
    const config = loadConfig(io.env, flags);
    // The HTTP server is loaded by the command that serves only: the others start faster without it.
    const { serve } = await import('../http/server.js');
    const services = await createServices(config);
    await serve(services);
    services.log.debug(keepHeapSmall(), 'old-generation heap limits set above what each collection keeps');
  });

  migrateCommand(program, io);
  tokenCommands(program, io);
  backupCommands(program, io);
  webhookCommands(program, io);
  wholeStoreCommands(program, io);
  return program;
}

function failureLine(err: unknown): string {
  if (err instanceof CliExit) return err.message;
  if (err instanceof ConfigError) return `invalid configuration: ${err.message}`;
  if (err instanceof StoreUnavailableError) return `the store is unavailable: ${reason(err.cause)}`;
  return err instanceof Error ? err.message : String(err);
}

/** The operator's one line on why the database could not be reached (never the URL, so never a password). */
function reason(cause: unknown): string {
  if (cause instanceof AggregateError && cause.errors.length) return reason(cause.errors[0]);
  if (cause instanceof Error) return cause.message || String((cause as { code?: unknown }).code ?? cause.name);
  return String(cause);
}
