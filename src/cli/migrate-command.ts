import type { Command } from 'commander';
import { withServices } from './with-services.js';

export function migrateCommand(program: Command): void {
  program
    .command('migrate')
    .description('apply pending schema migrations and exit')
    .action(async () => {
      const migrated = await withServices(async ({ migrated }) => migrated);
      process.stdout.write(migrated ? `applied ${migrated} migration(s)\n` : 'schema is up to date\n');
    });
}
