import { once } from 'node:events';
import type { Command } from 'commander';
import { atLine, splitLines } from '../json/ndjson.js';
import { exportPlants, importPlants, importProblems } from '../use-cases/export-import.js';
import { CliExit, type CliIo } from './io.js';
import { outputIsTheProduct } from './output.js';
import { withServices } from './with-services.js';

export function backupCommands(program: Command, io: CliIo): void {
  program
    .command('export')
    .description('write every plant to stdout as NDJSON, one {"id","name","tag"} object per line, by id')
    .action(async () => {
      outputIsTheProduct(io.stdout, 'the export');
      await withServices(io, async ({ store }) => {
        for await (const line of exportPlants(store)) {
          // Respect back-pressure so a million plants never sit in memory at once.
          if (!io.stdout.write(line)) await once(io.stdout, 'drain');
        }
      });
    });

  program
    .command('import')
    .description('read NDJSON plants from stdin; identical plants are skipped, conflicting ones reported')
    .action(async () => {
      // stdin is read only once the store is open: lines that arrived while an asynchronous
      // store (PostgreSQL) connected would otherwise be emitted before anyone listened. It is
      // read as bytes: each line goes to the same JSON reader as a request body.
      const report = await withServices(io, ({ store, doc, config }) =>
        importPlants(store, doc, splitLines(io.stdin, config.bodyLimitBytes), {
          maxLineBytes: config.bodyLimitBytes,
        }),
      );
      for (const p of importProblems(report)) io.stderr.write(`${atLine(p.line, p.message)}\n`);
      io.stdout.write(
        `import: ${report.created} created, ${report.skipped} skipped (identical), ` +
          `${report.refused.length} refused (conflicting), ${report.invalid.length} invalid line(s)\n`,
      );
      // The lines that could be imported are in; the exit status says some could not.
      if (report.refused.length || report.invalid.length) throw new CliExit(1);
    });
}
