// deploy/plant-store.service: what it must say (hardening, state directory, restart policy, a
// stop time-out longer than the drain), what systemd makes of it (`systemd-analyze verify` and
// the offline `security` score), and that its command line and environment start the built
// server, which stops cleanly on its KillSignal. systemd itself does not run here: the unit is
// checked as a file, and its command is run as systemd would run it, minus the sandbox.
import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { after, describe, it } from 'node:test';
import { SETTINGS } from '../../src/config/settings.js';

const ROOT = new URL('../../', import.meta.url).pathname;
const UNIT_PATH = join(ROOT, 'deploy/plant-store.service');
const INSTALL_DIR = '/opt/plant-store';
const STATE_DIR = '/var/lib/plant-store';
// Debian's systemd package has it (`apt-get install -y systemd`).
const SYSTEMD_ANALYZE = process.env.SYSTEMD_ANALYZE_PATH ?? '/usr/bin/systemd-analyze';

type Unit = Record<string, Record<string, string[]>>;

/** The unit's sections and their settings, every value of a repeated key in order. */
function parseUnit(text: string): Unit {
  const unit: Unit = {};
  let section: Record<string, string[]> | undefined;
  for (const raw of text.split('\n')) {
    const line = raw.trim();
    if (line === '' || line.startsWith('#') || line.startsWith(';')) continue;
    const header = /^\[(.+)\]$/.exec(line);
    if (header) {
      section = unit[header[1]!] ??= {};
      continue;
    }
    const eq = line.indexOf('=');
    assert.ok(section && eq > 0, `not a unit file line: ${line}`);
    (section[line.slice(0, eq)] ??= []).push(line.slice(eq + 1));
  }
  return unit;
}

/** systemd's time span: a number of seconds, or numbers with units ("30s", "1min 30s", "500ms"). */
function seconds(span: string): number {
  const units: Record<string, number> = { ms: 0.001, s: 1, sec: 1, m: 60, min: 60, h: 3600 };
  if (/^\d+$/.test(span)) return Number(span);
  let total = 0;
  for (const part of span.split(/\s+/)) {
    const m = /^(\d+)(ms|s|sec|m|min|h)$/.exec(part);
    assert.ok(m, `cannot read the time span ${span}`);
    total += Number(m[1]) * units[m[2]!]!;
  }
  return total;
}

const text = readFileSync(UNIT_PATH, 'utf8');
const unit = parseUnit(text);
const service = unit.Service ?? {};
const one = (key: string): string | undefined => service[key]?.at(-1);
const environment = Object.fromEntries(
  (service.Environment ?? []).map((e) => [e.slice(0, e.indexOf('=')), e.slice(e.indexOf('=') + 1)]),
);

describe('deploy/plant-store.service', () => {
  const dirs: string[] = [];
  after(() => dirs.forEach((d) => rmSync(d, { recursive: true, force: true })));
  const tempDir = (prefix: string) => {
    const d = mkdtempSync(join(tmpdir(), prefix));
    dirs.push(d);
    return d;
  };

  it('runs the installed server as its own user, with the store in its state directory', () => {
    assert.ok(one('User') === 'plant-store' || one('DynamicUser') === 'yes', 'a dedicated user');
    const words = one('ExecStart')!.split(/\s+/);
    assert.equal(words[0], '/usr/bin/node');
    assert.deepEqual(words.slice(-2), [`${INSTALL_DIR}/dist/cli/main.js`, 'serve']);
    assert.equal(one('StateDirectory'), 'plant-store');
    assert.equal(environment.DATABASE_URL, `sqlite:${STATE_DIR}/plant-store.db`);
    assert.equal(
      environment.HOST,
      '127.0.0.1',
      'this machine only, behind a proxy, unless the env file says otherwise',
    );
    // Optional ("-"), and read after Environment= so that it overrides the defaults.
    assert.deepEqual(service.EnvironmentFile, ['-/etc/plant-store/plant-store.env']);
    assert.ok(text.indexOf('EnvironmentFile=') > text.lastIndexOf('Environment='));
    assert.deepEqual(unit.Install?.WantedBy, ['multi-user.target']);
  });

  it('is hardened: read-only system, no home, private /tmp, no new privileges', () => {
    for (const [key, allowed] of Object.entries({
      ProtectSystem: ['strict'],
      ProtectHome: ['yes', 'read-only', 'tmpfs'],
      PrivateTmp: ['yes'],
      NoNewPrivileges: ['yes'],
      PrivateDevices: ['yes'],
      RestrictSUIDSGID: ['yes'],
    })) {
      assert.ok(allowed.includes(one(key) ?? ''), `${key}=${one(key)} (want ${allowed.join(' or ')})`);
    }
    assert.deepEqual(service.CapabilityBoundingSet, [''], 'no capabilities');
    // V8 compiles JavaScript to machine code at run time: W^X memory would stop the server.
    assert.notEqual(one('MemoryDenyWriteExecute'), 'yes');
  });

  it('restarts on failure, and stops with SIGTERM and time to drain', () => {
    assert.ok(['on-failure', 'always'].includes(one('Restart') ?? ''), `Restart=${one('Restart')}`);
    assert.equal(one('KillSignal'), 'SIGTERM');
    const stop = seconds(one('TimeoutStopSec') ?? '90s');
    const drain = Number(environment.SHUTDOWN_TIMEOUT_MS ?? SETTINGS.shutdownTimeoutMs.default) / 1000;
    assert.ok(stop >= drain + 5, `TimeoutStopSec (${stop} s) must outlast the server's drain (${drain} s)`);
  });

  it('comes with an example environment file that names real settings only', () => {
    const known = new Set(Object.values(SETTINGS).map((s) => s.env));
    const named = readFileSync(join(ROOT, 'deploy/plant-store.env'), 'utf8')
      .split('\n')
      .map((l) => /^#?([A-Z][A-Z0-9_]*)=/.exec(l)?.[1])
      .filter((name) => name !== undefined);
    assert.ok(named.length > 5);
    assert.deepEqual(
      named.filter((name) => !known.has(name)),
      [],
    );
  });

  describe('as systemd reads it', () => {
    const missing = !existsSync(SYSTEMD_ANALYZE);
    const skip =
      missing && process.env.CI !== 'true'
        ? `${SYSTEMD_ANALYZE} is not installed (apt-get install -y systemd); with CI=true this test fails instead`
        : false;

    /** A copy of the unit whose install directory is a temporary one, with a node in it. */
    function unitCopy(): string {
      const dir = tempDir('plant-store-unit-');
      const install = join(dir, 'opt/plant-store');
      mkdirSync(join(install, 'dist/cli'), { recursive: true });
      writeFileSync(join(install, 'dist/cli/main.js'), '');
      mkdirSync(join(dir, 'bin'));
      // verify checks that ExecStart's program exists and is executable.
      symlinkSync(process.execPath, join(dir, 'bin/node'));
      const copy = join(dir, 'plant-store.service');
      writeFileSync(
        copy,
        text.replaceAll(INSTALL_DIR, install).replace(/^ExecStart=\/usr\/bin\/node /m, `ExecStart=${dir}/bin/node `),
      );
      return copy;
    }

    it('passes systemd-analyze verify without a warning', { skip }, () => {
      assert.ok(!missing, `${SYSTEMD_ANALYZE} is not installed: .ci/run must install systemd`);
      const r = spawnSync(SYSTEMD_ANALYZE, ['verify', unitCopy()], { encoding: 'utf8', timeout: 60_000 });
      assert.equal(r.status, 0, r.stderr);
      // verify exits 0 on settings it ignores (unknown keys, values it cannot parse) and only
      // warns: any line about the unit is a failure here.
      assert.deepEqual(
        `${r.stdout}${r.stderr}`.split('\n').filter((l) => l.includes('plant-store.service')),
        [],
      );
    });

    it("scores as exposed no more than 2.0 in systemd-analyze security's offline check", { skip }, () => {
      assert.ok(!missing, `${SYSTEMD_ANALYZE} is not installed: .ci/run must install systemd`);
      const r = spawnSync(SYSTEMD_ANALYZE, ['security', '--offline=yes', '--no-pager', unitCopy()], {
        encoding: 'utf8',
        timeout: 60_000,
      });
      assert.equal(r.status, 0, r.stderr);
      const score = /Overall exposure level for [^:]+: ([\d.]+)/.exec(r.stdout);
      assert.ok(score, r.stdout + r.stderr);
      assert.ok(
        Number(score[1]) <= 2.0,
        `exposure ${score[1]}:\n${r.stdout
          .split('\n')
          .filter((l) => l.startsWith('✗'))
          .join('\n')}`,
      );
    });
  });

  it('gives Node the flags and malloc the arenas that npm start and the plant-store program give them', () => {
    // The young generation's size is a start-up flag of V8, and malloc reads MALLOC_ARENA_MAX when
    // the process starts: neither can be set once running, so the three ways the server is started
    // must each pass them (docs/performance.md, Memory).
    const flagsBefore = (words: string[], script: string) => words.slice(0, words.indexOf(script));
    const pkg = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { scripts: { start: string } };
    const npmStart = pkg.scripts.start.split(/\s+/);
    const fromNpm = flagsBefore(npmStart.slice(npmStart.indexOf('node') + 1), 'dist/cli/main.js');
    const fromUnit = flagsBefore(one('ExecStart')!.split(/\s+/).slice(1), `${INSTALL_DIR}/dist/cli/main.js`);
    const shebang = readFileSync(join(ROOT, 'src/cli/main.ts'), 'utf8').split('\n')[0]!.split(/\s+/);
    assert.ok(fromNpm.includes('--max-semi-space-size=16'), `npm start: ${pkg.scripts.start}`);
    assert.deepEqual(fromUnit, fromNpm);
    assert.deepEqual(shebang.slice(0, 4), ['#!/usr/bin/env', '-S', 'MALLOC_ARENA_MAX=1', 'node']);
    assert.deepEqual(shebang.slice(4), fromNpm);
    assert.deepEqual(npmStart.slice(0, 3), ['MALLOC_ARENA_MAX=1', 'exec', 'node']);
    assert.equal(environment.MALLOC_ARENA_MAX, '1');
  });

  it('its command and environment start the built server, which exits 0 on the KillSignal', async () => {
    // ExecStart as systemd runs it, with the install directory being this repository (built by
    // `npm test`), the state directory a temporary one, and an ephemeral port.
    const [program, ...argv] = one('ExecStart')!.split(/\s+/);
    assert.match(program!, /\/node$/);
    const state = tempDir('plant-store-state-');
    const env: Record<string, string> = { PATH: process.env.PATH ?? '/usr/bin:/bin' };
    for (const [k, v] of Object.entries(environment)) env[k] = v.replaceAll(STATE_DIR, state);
    env.PORT = '0';
    const proc = spawn(
      process.execPath,
      argv.map((a) => a.replace(INSTALL_DIR, ROOT.replace(/\/$/, ''))),
      {
        cwd: state,
        env,
        stdio: ['ignore', 'pipe', 'pipe'],
      },
    );
    const exited = new Promise<number | null>((resolve) => proc.once('exit', (code) => resolve(code)));
    const stderr: string[] = [];
    createInterface({ input: proc.stderr }).on('line', (l) => stderr.push(l));
    try {
      const url = await new Promise<string>((resolve, reject) => {
        const timer = setTimeout(() => reject(new Error(`no listening line in 15 s\n${stderr.join('\n')}`)), 15_000);
        createInterface({ input: proc.stdout }).on('line', (line) => {
          const entry = JSON.parse(line) as { msg?: string; url?: string };
          if (entry.msg === 'plant-store listening' && entry.url) {
            clearTimeout(timer);
            resolve(entry.url);
          }
        });
        void exited.then((code) => reject(new Error(`exited with ${code}\n${stderr.join('\n')}`)));
      });
      assert.equal((await fetch(`${url}/readyz`)).status, 200);
      assert.ok(existsSync(join(state, 'plant-store.db')), 'the store is in the state directory');

      const stopping = Date.now();
      proc.kill(one('KillSignal') as NodeJS.Signals);
      assert.equal(await exited, 0);
      assert.ok(Date.now() - stopping < seconds(one('TimeoutStopSec')!) * 1000);
    } finally {
      proc.kill('SIGKILL');
    }
  });
});
