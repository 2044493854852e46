// A node:test reporter that scripts/test.mjs adds when TEST_DURATIONS names a file: each test
// file's duration (the sum of its top-level tests', which one process runs one after the other)
// is appended to it, one JSON line a file ({"file":…,"ms":…}), to find the slow ones.
import { appendFileSync } from 'node:fs';
import { relative } from 'node:path';

export default async function* reporter(source) {
  const per = new Map();
  for await (const event of source) {
    if (event.type !== 'test:pass' && event.type !== 'test:fail') continue;
    const { nesting, file, details } = event.data;
    if (nesting === 0 && file) per.set(file, (per.get(file) ?? 0) + (details?.duration_ms ?? 0));
  }
  const lines = [...per].map(([file, ms]) =>
    JSON.stringify({ file: relative(process.cwd(), file), ms: Math.round(ms) }),
  );
  if (lines.length) appendFileSync(process.env.TEST_DURATIONS, `${lines.join('\n')}\n`);
  yield '';
}
