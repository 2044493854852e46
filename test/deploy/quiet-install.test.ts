// `npm ci` on the system Node (20 on the machines the README names) says nothing about engines:
// the dependencies that need Node 22 never run on it (npm's scripts and npx run on the `node`
// devDependency), and their 240 lines of EBADENGINE warnings read like a failed install. A dry
// run of `npm ci` resolves the same tree and warns the same, in a second.
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { describe, it } from 'node:test';

const ROOT = new URL('../../', import.meta.url).pathname;
const SYSTEM_NPM = '/usr/bin/npm';

describe('npm ci on the system Node', () => {
  const systemNode = existsSync('/usr/bin/node')
    ? execFileSync('/usr/bin/node', ['--version'], { encoding: 'utf8' }).trim()
    : undefined;
  const older = systemNode !== undefined && Number(/^v(\d+)/.exec(systemNode)?.[1]) < 22;
  const skip = !existsSync(SYSTEM_NPM) || !older ? `needs npm on a system Node before 22 (${systemNode})` : false;

  it(
    'prints no EBADENGINE warning, while npm still would with warnings on',
    { skip: process.env.CI ? false : skip },
    () => {
      const warnings = (text: string) => text.split('\n').filter((l) => l.includes('EBADENGINE')).length;
      const quiet = execFileSync('sh', ['-c', `${SYSTEM_NPM} ci --dry-run --ignore-scripts 2>&1`], {
        cwd: ROOT,
        env: { ...process.env, PATH: '/usr/bin:/bin' },
        encoding: 'utf8',
      });
      assert.equal(warnings(quiet), 0, quiet.slice(0, 2000));
      // The warnings are there to hide: with npm's warnings on, the same run prints them.
      const loud = execFileSync('sh', ['-c', `${SYSTEM_NPM} ci --dry-run --ignore-scripts --loglevel=warn 2>&1`], {
        cwd: ROOT,
        env: { ...process.env, PATH: '/usr/bin:/bin' },
        encoding: 'utf8',
      });
      assert.ok(warnings(loud) > 0, 'npm warned of no engine: the test shows nothing on this Node');
    },
  );
});
