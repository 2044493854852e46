import type { Command } from 'commander';
import type { CliIo } from './io.js';
import { withServices } from './with-services.js';

export function migrateCommand(program: Command, io: CliIo): void {
  program
    .command('migrate')
    .description('apply pending schema migrations and exit')
    .action(async () => {
      const migrated = await withServices(io, async ({ migrated }) => migrated, { create: true });
      io.stdout.write(migrated ? `applied ${migrated} migration(s)\n` : 'schema is up to date\n');
    });
}
