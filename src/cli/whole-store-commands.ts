import { once } from 'node:events';
import {
  closeSync,
  createReadStream,
  createWriteStream,
  fsyncSync,
  openSync,
  readFileSync,
  realpathSync,
  renameSync,
  rmSync,
  statSync,
  type Stats,
} from 'node:fs';
import { basename, dirname, join } from 'node:path';
import type { Command } from 'commander';
import { backupStore } from '../use-cases/backup.js';
import { describeCounts, kindsHeld } from '../use-cases/backup-records/registry.js';
import { RestoreRefusedError, restoreStore, StoreNotEmptyError } from '../use-cases/restore.js';
import type { CliIo } from './io.js';
import { fail, outputIsTheProduct } from './output.js';
import { withServices } from './with-services.js';

const { version } = JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as {
  version: string;
};

const plural = (n: number, one: string) => `${n} ${one}${n === 1 ? '' : 's'}`;

/** Writes chunks to a stream, waiting whenever it asks to (a million plants never sit in memory). */
async function pipeTo(chunks: AsyncIterable<string>, out: NodeJS.WritableStream): Promise<void> {
  // A reader that went away (EPIPE) or a full disk ends the backup, instead of a wait for 'drain'.
  let failed: Error | undefined;
  const onError = (err: Error) => (failed ??= err);
  out.on('error', onError);
  try {
    for await (const chunk of chunks) {
      if (failed) break;
      if (!out.write(chunk)) await once(out, 'drain');
    }
  } catch (err) {
    failed ??= err as Error;
  } finally {
    out.off('error', onError);
  }
  if (failed) throw failed;
}

const notAFile = (s: Stats) =>
  s.isDirectory() ? 'a directory' : s.isFIFO() ? 'a named pipe' : s.isSocket() ? 'a socket' : 'a device';

/**
 * The file `--output` names, checked before the store is read: the backup is renamed over it, so
 * it must be a file or nothing yet (a device such as /dev/full, or a named pipe, would be replaced
 * by a regular file). Through a link, the file it points to, so the link keeps pointing at the
 * backup.
 */
function outputFile(name: string): string {
  if (name === '') fail('backup: --output needs a file name');
  let stats: Stats;
  try {
    stats = statSync(name);
  } catch (err) {
    if ((err as { code?: string }).code === 'ENOENT') return name;
    throw err;
  }
  if (!stats.isFile()) {
    fail(`backup: --output ${name} is ${notAFile(stats)}, not a file; name a file, or write to stdout (backup > FILE)`);
  }
  return realpathSync(name);
}

/**
 * `--output FILE`: written beside it under a temporary name, owner-only (it holds token hashes and
 * webhook secrets), synced, then renamed over FILE: FILE is a whole backup or is left as it was.
 */
async function backupToFile(file: string, chunks: AsyncIterable<string>): Promise<void> {
  const partial = join(dirname(file), `.${basename(file)}.partial-${process.pid}`);
  const out = createWriteStream(partial, { mode: 0o600, flags: 'wx' });
  try {
    await once(out, 'open');
    await pipeTo(chunks, out);
    out.end();
    await once(out, 'finish');
    const fd = openSync(partial, 'r');
    try {
      fsyncSync(fd);
    } finally {
      closeSync(fd);
    }
    renameSync(partial, file);
    const dir = openSync(dirname(file), 'r');
    try {
      fsyncSync(dir);
    } finally {
      closeSync(dir);
    }
  } catch (err) {
    out.destroy();
    rmSync(partial, { force: true });
    throw err;
  }
}

export function wholeStoreCommands(program: Command, io: CliIo): void {
  program
    .command('backup')
    .description(
      `write the whole store (${kindsHeld()}) to stdout or --output, as one consistent ` +
        'snapshot, while the server keeps serving',
    )
    .option('--output <file>', 'write it to this file (owner-only; replaced only once the backup is whole)')
    .action(async (opts: { output?: string }) => {
      if (opts.output === undefined && io.stdout.isTTY) {
        fail('backup: stdout is a terminal; redirect it to a file (backup > store.backup) or use --output FILE');
      }
      if (opts.output === undefined) outputIsTheProduct(io.stdout, 'the backup');
      const output = opts.output === undefined ? undefined : outputFile(opts.output);
      const counts = await withServices(io, async ({ store }) => {
        const lines = backupStore(store, version);
        let result: Awaited<ReturnType<typeof lines.next>> | undefined;
        // Keep the generator's return value (the counts) while streaming its chunks.
        const chunks = {
          async *[Symbol.asyncIterator]() {
            for (result = await lines.next(); !result.done; result = await lines.next()) yield result.value;
          },
        };
        if (output !== undefined) await backupToFile(output, chunks);
        else await pipeTo(chunks, io.stdout);
        return result?.done ? result.value : undefined;
      }).catch((err: unknown) => {
        const code = (err as { code?: string }).code;
        if (code === 'ENOSPC') fail(`backup: no room left for it on the disk${opts.output ? '' : ' (stdout)'}`);
        if (opts.output !== undefined && (err as { syscall?: string }).syscall === 'open') {
          fail(`backup: cannot create a file beside ${opts.output} (${code})`);
        }
        throw err;
      });
      if (counts) {
        io.stderr.write(`backup: ${describeCounts(counts)} as of ${counts.header.takenAt}\n`);
      }
    });

  program
    .command('restore')
    .description('read a backup from stdin or --input into an empty store, whole or not at all (one transaction)')
    .option('--input <file>', 'read it from this file')
    .action(async (opts: { input?: string }) => {
      if (opts.input === undefined && io.stdin.isTTY) {
        fail('restore: stdin is a terminal; give it the backup (restore < store.backup) or use --input FILE');
      }
      if (opts.input !== undefined) {
        // Checked before the store is opened, which would create a new store's tables.
        try {
          closeSync(openSync(opts.input, 'r'));
        } catch (err) {
          fail(`restore: cannot read ${opts.input} (${(err as { code?: string }).code})`);
        }
      }
      let report;
      try {
        // The input is opened only once the store is: nothing is read from a store that cannot be opened.
        report = await withServices(
          io,
          async ({ store, doc, config }) => {
            try {
              return await restoreStore(
                store,
                doc,
                opts.input !== undefined ? createReadStream(opts.input) : io.stdin,
                config,
              );
            } catch (err) {
              // Nothing was restored: a store file this command created goes too. The refusal is the
              // line to show; a file that cannot be taken away is left, as it was before this.
              await store.files?.discardIfNew().catch(() => undefined);
              throw err;
            }
          },
          { create: true },
        );
      } catch (err) {
        if (err instanceof RestoreRefusedError) fail(`restore refused, nothing was restored: ${err.message}`);
        if (err instanceof StoreNotEmptyError) fail(`restore refused: ${err.message}`);
        throw err;
      }
      const h = report.header;
      io.stdout.write(
        `restore: ${describeCounts(report)} from a backup of ${h.takenAt} ` +
          `(plant-store ${h.plantStore}, ${h.store} schema ${h.schema})\n`,
      );
      if (report.unopenedSecrets > 0) {
        io.stderr.write(
          `plant-store: ${plural(report.unopenedSecrets, 'webhook secret')} of this backup ` +
            `${report.unopenedSecrets === 1 ? 'is' : 'are'} sealed with a WEBHOOK_SECRET_KEY that this ` +
            `environment does not have: give the server the key the backup's store used, or those endpoints ` +
            `cannot be sent to\n`,
        );
      }
    });
}
