import type { Command } from 'commander';
import { withStore } from './with-store.js';

export function migrateCommand(program: Command): void {
  program
    .command('migrate')
    .description('apply pending schema migrations and exit')
    .action(async () => {
      const migrated = await withStore(async (_store, n) => n);
      process.stdout.write(migrated ? `applied ${migrated} migration(s)\n` : 'schema is up to date\n');
    });
}
