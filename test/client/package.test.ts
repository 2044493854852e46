// Depending on the typed client the way README says: pack this package, install the tarball in
// a scratch project, type-check a small TypeScript program against `plant-store/client` there,
// and run it against a live service. Also: what the tarball holds, and nothing more.
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { promisify } from 'node:util';
import { buildTestApp, type TestApp } from '../helper.js';

const run = promisify(execFile);
const ROOT = new URL('../../', import.meta.url).pathname;
const { version } = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { version: string };

// What the tarball may hold: the build, the document, the manifest and the usual documents.
const ALLOWED = /^(dist\/.+|openapi\/plant-store\.yaml|package\.json|README\.md|LICENSE|CHANGELOG\.md)$/;
// What it must never hold, wherever it sits: stores, keys, environment files, logs, exports.
const SECRET =
  /(\.db|\.db-wal|\.db-shm|\.env|\.pem|\.key|\.ndjson|\.log|\.tgz|\.npmrc)$|key\.json$|(^|\/)(data|idp|test-output)\//;

const PROGRAM = `import { createPlantStoreClient, type NewPlant } from 'plant-store/client';

const [baseUrl, token] = process.argv.slice(2) as [string, string];
const client = createPlantStoreClient({ baseUrl, token });
const plant: NewPlant = { id: 9007199254740993n, name: 'Pothos', tag: 'from the tarball' };
const created = await client.POST('/plants', { body: plant });
const read = await client.GET('/plants/{id}', { params: { path: { id: plant.id } } });
const page = await client.GET('/plants', { params: { query: { limit: 10 } } });
const refused = await createPlantStoreClient({ baseUrl }).GET('/plants');
console.log(
  JSON.stringify({
    created: created.response.status,
    createdBody: created.data,
    read: read.data && { id: String(read.data.id), idType: typeof read.data.id, name: read.data.name, tag: read.data.tag },
    listed: page.data?.length,
    refused: refused.error,
  }),
);
`;

describe('plant-store/client from a packed tarball, in a project of its own', { timeout: 600_000 }, () => {
  let dir: string;
  let tarball: string;
  let files: string[];
  let server: TestApp;

  before(async () => {
    dir = mkdtempSync(join(tmpdir(), 'plant-store-pack-'));
    // --ignore-scripts: `npm test` has built dist/ already; packing would run `prepare` (the
    // build) again, rewriting dist/ under the other test files that run the built server.
    const packed = await run('npm', ['pack', '--ignore-scripts', '--json', '--pack-destination', dir], {
      cwd: ROOT,
      timeout: 120_000,
    });
    const [info] = JSON.parse(packed.stdout) as [{ filename: string; files: { path: string }[] }];
    tarball = join(dir, info.filename);
    files = info.files.map((f) => f.path);
    server = await buildTestApp();
  });

  after(async () => {
    await server?.close();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it(`is plant-store-${version}.tgz, with the client and its JSON reader and writer, and nothing else`, () => {
    assert.equal(tarball, join(dir, `plant-store-${version}.tgz`));
    for (const needed of [
      'package.json',
      'dist/client/index.js',
      'dist/client/index.d.ts',
      'dist/client/schema.d.ts',
      'dist/json/read-json.js',
      'dist/json/write-json.js',
      'dist/cli/main.js',
      'CHANGELOG.md',
    ]) {
      assert.ok(files.includes(needed), `${needed} is missing from the tarball`);
    }
    assert.deepEqual(
      files.filter((f) => !ALLOWED.test(f)),
      [],
      'unexpected files',
    );
    assert.deepEqual(
      files.filter((f) => SECRET.test(f)),
      [],
      'files that may hold secrets',
    );
  });

  it('installs with npm, type-checks a program against plant-store/client and calls the service with it', async () => {
    const project = join(dir, 'project');
    mkdirSync(project);
    writeFileSync(
      join(project, 'package.json'),
      JSON.stringify({ name: 'uses-plant-store', private: true, type: 'module' }),
    );
    // From the registry, bounded in time. --ignore-scripts: the client does not load the server's
    // native SQLite module, whose install script would download or compile it (minutes).
    await run('npm', ['install', '--no-audit', '--no-fund', '--prefer-offline', '--ignore-scripts', tarball], {
      cwd: project,
      timeout: 300_000,
    });

    writeFileSync(join(project, 'call.ts'), PROGRAM);
    writeFileSync(
      join(project, 'tsconfig.json'),
      JSON.stringify({
        compilerOptions: {
          target: 'es2022',
          module: 'nodenext',
          moduleResolution: 'nodenext',
          strict: true,
          skipLibCheck: false,
          types: ['node'],
          typeRoots: [join(ROOT, 'node_modules/@types')],
        },
        files: ['call.ts'],
      }),
    );
    // The repository's TypeScript, on the scratch project: the shipped .d.ts files must resolve there.
    await run(process.execPath, [join(ROOT, 'node_modules/typescript/bin/tsc'), '-p', project], {
      timeout: 120_000,
    }).catch((err: { stdout?: string }) => assert.fail(`the program does not type-check:\n${err.stdout}`));

    const url = await server.listen();
    const { stdout } = await run(process.execPath, [join(project, 'call.js'), url, server.token], {
      cwd: project,
      timeout: 30_000,
    });
    assert.deepEqual(JSON.parse(stdout), {
      created: 200,
      createdBody: { name: 'Pothos', tag: 'from the tarball' },
      read: { id: '9007199254740993', idType: 'bigint', name: 'Pothos', tag: 'from the tarball' },
      listed: 1,
      refused: { error: 401, message: refusedMessage(await server.inject({ path: '/plants' })) },
    });
  });
});

function refusedMessage(res: { json: unknown }): string {
  return (res.json as { message: string }).message;
}
