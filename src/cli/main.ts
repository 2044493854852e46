#!/usr/bin/env -S MALLOC_ARENA_MAX=1 node --max-semi-space-size=16
// The `plant-store` command. Run as a program (npx, a global install), it starts Node with the
// heap and malloc settings that `npm start` and the service unit give it (docs/performance.md,
// Memory).
// V8's compile cache (Node 22.1 and later) keeps the compiled code of the modules on disk, so
// every start after the first loads them faster: a command, a restart. It is turned on before
// the program's modules are loaded, hence the dynamic import.
import module from 'node:module';

(module as { enableCompileCache?: () => unknown }).enableCompileCache?.();
const { quietOnClosedPipe } = await import('./output.js');
const { runProgram } = await import('./program.js');

quietOnClosedPipe();
const code = await runProgram(process.argv.slice(2), {
  env: process.env,
  stdin: process.stdin,
  stdout: process.stdout,
  stderr: process.stderr,
});
// A failed command ends now, as it always has, whatever it left open; a command that succeeded
// (serve among them) ends when its work does.
if (code !== 0) process.exit(code);
