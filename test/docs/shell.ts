import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pollUntil } from '../support/poll.js';

export interface Outcome {
  stdout: string;
  stderr: string;
  status: number;
}

/**
 * One bash, as a reader's terminal: the steps of a page run in it one after the other, so that
 * what one step sets (a variable, a background job) is there for the next. Each step's output goes
 * to files of its own, so that a job it leaves running (a server) never mixes into a later step's.
 */
export class Shell {
  private readonly proc: ChildProcess;
  private readonly dir = mkdtempSync(join(tmpdir(), 'plant-store-page-'));
  private said = '';
  /** The steps started in the background and not stopped, oldest first. */
  readonly background: number[] = [];
  private steps = 0;

  constructor(cwd: string, env: Record<string, string>) {
    // Its own process group, so that close() ends every job a page left running, and nothing else.
    this.proc = spawn('bash', ['--noprofile', '--norc'], { cwd, env, detached: true, stdio: ['pipe', 'pipe', 'pipe'] });
    this.proc.stdout!.on('data', (chunk: Buffer) => (this.said += chunk.toString()));
    this.proc.stderr!.resume();
    // Job control, as in a terminal: each background job is a process group of its own, which
    // stop() can interrupt as Ctrl-C in its terminal would.
    this.proc.stdin!.write('set -m\n');
  }

  /** Runs a step in the foreground; its stdin is empty, as the page's own lines are not its input. */
  async run(command: string, timeoutMs: number): Promise<Outcome> {
    const n = ++this.steps;
    this.proc.stdin!.write(
      `{\n${command}\n} > ${this.file(n, 'out')} 2> ${this.file(n, 'err')} < /dev/null\necho "@@${n} $?"\n`,
    );
    const done = new RegExp(`@@${n} (\\d+)\\n`);
    if (!(await pollUntil(async () => done.test(this.said), timeoutMs, 20))) {
      throw new Error(`no end within ${timeoutMs} ms of:\n${command}\n${this.output(n).stderr}`);
    }
    return { ...this.output(n), status: Number(done.exec(this.said)![1]) };
  }

  /** Starts a step in the background, as in a terminal of its own; read what it prints with output(). */
  start(command: string): number {
    const n = ++this.steps;
    this.proc.stdin!.write(
      `{\n${command}\n} > ${this.file(n, 'out')} 2> ${this.file(n, 'err')} < /dev/null &\nJOB_${n}=$!\n`,
    );
    this.background.push(n);
    return n;
  }

  /** Ends a step started in the background as Ctrl-C would (SIGINT to its processes), and waits for it. */
  async stop(n: number): Promise<void> {
    await this.run(`kill -INT -- -$JOB_${n}; wait $JOB_${n}`, 20_000);
  }

  output(n: number): { stdout: string; stderr: string } {
    const read = (f: string) => {
      try {
        return readFileSync(f, 'utf8');
      } catch {
        return '';
      }
    };
    return { stdout: read(this.file(n, 'out')), stderr: read(this.file(n, 'err')) };
  }

  async close(): Promise<void> {
    const exited = new Promise((resolve) => this.proc.once('exit', resolve));
    // Every job still running (a server, a stream), each its own process group, then the shell.
    this.proc.stdin!.end('for job in $(jobs -p); do kill -TERM -- -$job; done; wait; exit\n');
    await Promise.race([exited, new Promise((resolve) => setTimeout(resolve, 15_000))]);
    try {
      process.kill(-this.proc.pid!, 'SIGKILL');
    } catch {
      // Gone, as it should be.
    }
    rmSync(this.dir, { recursive: true, force: true });
  }

  private file(n: number, kind: string): string {
    return join(this.dir, `${n}.${kind}`);
  }
}
