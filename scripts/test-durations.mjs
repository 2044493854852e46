// A node:test reporter that scripts/test.mjs adds when TEST_DURATIONS names a file: each test
// file's duration (the sum of its top-level tests', which one process runs one after the other)
// and the CPU spent meanwhile, by the process and by the processes it started and waited for
// (Linux only: /proc), appended to it, one JSON line a file ({"file":…,"ms":…,"cpuMs":…}), to
// find the slow ones and the costly ones.
import { appendFileSync, readFileSync } from 'node:fs';
import { relative } from 'node:path';

/** This process's CPU and its waited-for children's, in ms; 0 where /proc is not. */
function cpuMs() {
  try {
    // Fields 14-17 after the command's closing parenthesis: utime, stime, cutime, cstime (ticks of 10 ms).
    const fields = readFileSync('/proc/self/stat', 'utf8').split(') ')[1].split(' ');
    return fields.slice(11, 15).reduce((sum, ticks) => sum + Number(ticks) * 10, 0);
  } catch {
    return 0;
  }
}

export default async function* reporter(source) {
  const per = new Map();
  let cpu = cpuMs();
  for await (const event of source) {
    if (event.type !== 'test:pass' && event.type !== 'test:fail') continue;
    const { nesting, file, details } = event.data;
    if (nesting !== 0 || !file) continue;
    const now = cpuMs();
    const seen = per.get(file) ?? { ms: 0, cpuMs: 0 };
    per.set(file, { ms: seen.ms + (details?.duration_ms ?? 0), cpuMs: seen.cpuMs + now - cpu });
    cpu = now;
  }
  const lines = [...per].map(([file, { ms, cpuMs }]) =>
    JSON.stringify({ file: relative(process.cwd(), file), ms: Math.round(ms), cpuMs }),
  );
  if (lines.length) appendFileSync(process.env.TEST_DURATIONS, `${lines.join('\n')}\n`);
  yield '';
}
