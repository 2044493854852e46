// The client package as a user gets it: `npm pack` of packages/client, installed in an empty
// project by the system's npm running on the system's Node (20 on the machines this runs on),
// from the npm registry, install scripts allowed, as docs/guides/client.md ("Depending on the client") says.
import { execFile } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { promisify } from 'node:util';

const run = promisify(execFile);
export const ROOT = new URL('../../', import.meta.url).pathname;
export const PACKAGE_DIR = join(ROOT, 'packages/client');
/** The Node the client must run on, the lowest it supports: the system's, not the repository's 24. */
export const SYSTEM_NODE = process.env.SYSTEM_NODE ?? '/usr/bin/node';

export interface PackedClient {
  dir: string;
  tarball: string;
  /** The paths the tarball holds, as npm pack lists them. */
  files: string[];
  /** The scratch project it is installed in. */
  project: string;
  /** What npm install printed (stdout and stderr). */
  installOutput: string;
  /** The version of the Node that npm ran on for the install (`npm version`'s `node`). */
  npmNode: string;
  dispose(): void;
}

export async function packAndInstallClient(): Promise<PackedClient> {
  if (!existsSync(SYSTEM_NODE)) throw new Error(`${SYSTEM_NODE} does not exist: set SYSTEM_NODE to a Node 20`);
  const dir = mkdtempSync(join(tmpdir(), 'plant-store-client-pack-'));
  try {
    // --ignore-scripts: `npm test` has built the package already; its prepack would build it
    // again, rewriting packages/client/dist under the other tests.
    const packed = await run('npm', ['pack', '--ignore-scripts', '--json', '--pack-destination', dir], {
      cwd: PACKAGE_DIR,
      timeout: 120_000,
    });
    const [info] = JSON.parse(packed.stdout) as [{ filename: string; files: { path: string }[] }];
    const project = join(dir, 'project');
    mkdirSync(project);
    writeFileSync(
      join(project, 'package.json'),
      JSON.stringify({ name: 'uses-the-client', version: '1.0.0', private: true, type: 'module' }),
    );
    // npm from the system Node's directory, so that npm itself runs on that Node and would say
    // EBADENGINE if the package's engines left it out.
    const env = { ...process.env, PATH: `${dirname(SYSTEM_NODE)}:${process.env.PATH}` };
    const tarball = join(dir, info.filename);
    const installed = await run('npm', ['install', '--no-audit', '--no-fund', '--prefer-offline', tarball], {
      cwd: project,
      env,
      timeout: 300_000,
    });
    const versions = await run('npm', ['version', '--json'], { cwd: project, env });
    return {
      dir,
      tarball,
      files: info.files.map((f) => f.path),
      project,
      installOutput: installed.stdout + installed.stderr,
      npmNode: (JSON.parse(versions.stdout) as { node: string }).node,
      dispose: () => rmSync(dir, { recursive: true, force: true }),
    };
  } catch (err) {
    rmSync(dir, { recursive: true, force: true });
    throw err;
  }
}

/** The packages npm installed in the project, with what its lockfile says of each. */
export function installedPackages(project: string): Record<string, { hasInstallScript?: boolean }> {
  const lock = JSON.parse(readFileSync(join(project, 'package-lock.json'), 'utf8')) as {
    packages: Record<string, { hasInstallScript?: boolean }>;
  };
  return Object.fromEntries(Object.entries(lock.packages).filter(([path]) => path !== ''));
}
