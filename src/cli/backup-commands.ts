import { once } from 'node:events';
import { createInterface } from 'node:readline';
import type { Command } from 'commander';
import { exportPlants, importPlants } from '../use-cases/export-import.js';
import { withServices } from './with-services.js';

export function backupCommands(program: Command): void {
  program
    .command('export')
    .description('write every plant to stdout as NDJSON, one {"id","name","tag"} object per line, by id')
    .action(async () => {
      await withServices(async ({ store }) => {
        for await (const line of exportPlants(store)) {
          // Respect back-pressure so a million plants never sit in memory at once.
          if (!process.stdout.write(line)) await once(process.stdout, 'drain');
        }
      });
    });

  program
    .command('import')
    .description('read NDJSON plants from stdin; identical plants are skipped, conflicting ones reported')
    .action(async () => {
      // stdin is read only once the store is open: lines that arrived while an asynchronous
      // store (PostgreSQL) connected would otherwise be emitted before anyone listened.
      const report = await withServices(({ store, doc }) =>
        importPlants(store, doc, createInterface({ input: process.stdin, crlfDelay: Infinity })),
      );
      for (const bad of report.invalid) process.stderr.write(`line ${bad.line}: ${bad.message}\n`);
      for (const r of report.refused) {
        process.stderr.write(
          `line ${r.line}: plant ${r.id} already exists with a different name or tag; left as it is\n`,
        );
      }
      process.stdout.write(
        `import: ${report.created} created, ${report.skipped} skipped (identical), ` +
          `${report.refused.length} refused (conflicting), ${report.invalid.length} invalid line(s)\n`,
      );
      if (report.refused.length || report.invalid.length) process.exitCode = 1;
    });
}
