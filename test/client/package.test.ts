// @plant-store/client as docs/guides/client.md ("Depending on the client") has a user get it: packed, installed
// in an empty project by the system's npm on the system's Node 20, type-checked there (its merge
// patch typing included) and run there against a live service. Also: what the tarball holds and
// what the install brought with it.
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { promisify } from 'node:util';
import { buildTestApp, type TestApp } from '../helper.js';
import {
  installedPackages,
  packAndInstallClient,
  ROOT,
  SYSTEM_NODE,
  type PackedClient,
} from '../support/packed-client.js';

const run = promisify(execFile);
const { version } = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { version: string };
const SHIPPED = /^(package\.json|README\.md|dist\/(client|json)\/[a-z-]+\.(js|d\.ts))$/;
const PAST_2_53 = '9007199254740993';
const systemNodeVersion = async () => (await run(SYSTEM_NODE, ['--version'])).stdout.trim();

// Run with the system Node: lists a filter by pages of one, patches, follows from the listing.
const PROGRAM = `import { allPlants, createPlantStoreClient, followChanges, ListError } from '@plant-store/client';

const [baseUrl, token] = process.argv.slice(2) as [string, string];
const client = createPlantStoreClient({ baseUrl, token });
const big = ${PAST_2_53}n;
const created = await client.POST('/plants', { body: { id: big, name: 'Pothos', tag: 'packed' } });
for (const id of [1, 2, 3]) await client.POST('/plants', { body: { id, name: 'Fern', tag: id === 2 ? 'other' : 'packed' } });
let position: string | null = null;
const listed: string[] = [];
const onPage = (page: Response) => void (position ??= page.headers.get('change-position'));
for await (const plant of allPlants(client, { tag: ['packed'], limit: 1, onPage })) listed.push(\`\${plant.id} \${typeof plant.id}\`);
const patched = await client.PATCH('/plants/{id}', { params: { path: { id: big } }, body: { tag: null } });
const followed: string[] = [];
for await (const change of followChanges({ client, after: position!, wait: 1 })) {
  followed.push(\`\${change.type} \${change.id}\`);
  if (change.type === 'updated') break;
}
const refused = await allPlants(createPlantStoreClient({ baseUrl })).next().catch((err: unknown) => err);
const refusal = refused instanceof ListError ? refused.status : refused;
console.log(JSON.stringify({ node: process.version, created: created.response.status, listed, patched: patched.data, followed, refusal }));
`;

// Compiled, never run: each @ts-expect-error fails the compilation when its line compiles.
const TYPES = `import { createPlantStoreClient } from '@plant-store/client';

export async function patches(): Promise<string | undefined> {
  const client = createPlantStoreClient({ baseUrl: 'http://127.0.0.1:1' });
  const path = { id: ${PAST_2_53}n };
  // @ts-expect-error: a misspelt member of a merge patch
  await client.PATCH('/plants/{id}', { params: { path }, body: { nmae: 'x' } });
  // @ts-expect-error: a merge patch is an object
  await client.PATCH('/plants/{id}', { params: { path }, body: 42 });
  // @ts-expect-error: a name is a string
  await client.PATCH('/plants/{id}', { params: { path }, body: { name: 3 } });
  // @ts-expect-error: a patch has a body
  await client.PATCH('/plants/{id}', { params: { path } });
  const { data } = await client.PATCH('/plants/{id}', { params: { path }, body: { name: 'Ivy', tag: null } });
  return data?.name;
}
`;

describe('@plant-store/client from npm pack, in an empty project', { timeout: 600_000 }, () => {
  let packed: PackedClient;
  let server: TestApp;

  before(async () => {
    [packed, server] = await Promise.all([packAndInstallClient(), buildTestApp()]);
  });
  after(async () => {
    await server?.close();
    packed?.dispose();
  });

  it(`is plant-store-client-${version}.tgz, the client, its JSON reader and writer, and nothing else`, () => {
    assert.equal(packed.tarball, join(packed.dir, `plant-store-client-${version}.tgz`));
    for (const name of ['index', 'follow', 'pages', 'schema'])
      assert.ok(packed.files.includes(`dist/client/${name}.d.ts`));
    for (const name of ['read-json', 'write-json']) assert.ok(packed.files.includes(`dist/json/${name}.js`));
    assert.deepEqual(
      packed.files.filter((f) => !SHIPPED.test(f)),
      [],
    );
    // What a browser can load: imports of its own files and of openapi-fetch only.
    const specifiers = new Set<string>();
    for (const file of packed.files.filter((f) => f.endsWith('.js'))) {
      const code = readFileSync(join(packed.project, 'node_modules/@plant-store/client', file), 'utf8');
      const imports =
        /^(?:import|export)\b[^'";()]*\bfrom\s*['"]([^'"]+)|^import\s*['"]([^'"]+)|\bimport\(\s*['"]([^'"]+)/gm;
      for (const found of code.matchAll(imports)) {
        const specifier = found[1] ?? found[2] ?? found[3];
        assert.match(specifier!, /^(\.\.?\/|openapi-fetch$)/, `${file} imports ${specifier}`);
        specifiers.add(specifier!);
      }
    }
    for (const seen of ['openapi-fetch', './follow.js', '../json/read-json.js']) assert.ok(specifiers.has(seen), seen);
  });

  it('installs openapi-fetch alone with it, no install script, no EBADENGINE on the system Node', async () => {
    assert.deepEqual(Object.keys(installedPackages(packed.project)).sort(), [
      'node_modules/@plant-store/client',
      'node_modules/openapi-fetch',
      'node_modules/openapi-typescript-helpers',
    ]);
    for (const [path, entry] of Object.entries(installedPackages(packed.project)))
      assert.equal(entry.hasInstallScript, undefined, `${path} has an install script`);
    for (const gone of ['better-sqlite3', 'swagger-ui-dist', 'plant-store'])
      assert.ok(!existsSync(join(packed.project, 'node_modules', gone)), `${gone} was installed`);
    // npm ran on the system Node, which it checks the package's engines against.
    assert.equal(`v${packed.npmNode}`, await systemNodeVersion());
    assert.doesNotMatch(packed.installOutput, /EBADENGINE/);
  });

  it(`type-checks and runs on the system Node (${SYSTEM_NODE}) against a live service`, async () => {
    const { project } = packed;
    writeFileSync(join(project, 'call.ts'), PROGRAM);
    writeFileSync(join(project, 'types.ts'), TYPES);
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
        files: ['call.ts', 'types.ts'],
      }),
    );
    // The repository's TypeScript, on the scratch project: the shipped .d.ts files must resolve there.
    await run(process.execPath, [join(ROOT, 'node_modules/typescript/bin/tsc'), '-p', project], {
      timeout: 120_000,
    }).catch((err: { stdout?: string }) => assert.fail(`the program does not type-check:\n${err.stdout}`));

    const url = await server.listen();
    const { stdout } = await run(SYSTEM_NODE, [join(project, 'call.js'), url, server.token], { timeout: 60_000 });
    assert.deepEqual(JSON.parse(stdout), {
      node: await systemNodeVersion(),
      created: 200,
      listed: ['1 number', '3 number', `${PAST_2_53} bigint`],
      patched: { name: 'Pothos' },
      // From the listing's position: the patch, and nothing before it.
      followed: [`updated ${PAST_2_53}`],
      refusal: 401,
    });
  });
});
