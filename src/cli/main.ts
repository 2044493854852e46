#!/usr/bin/env node
// The `plant-store` command. V8's compile cache (Node 22.1 and later) keeps the compiled code of
// the modules on disk, so every start after the first loads them faster: a command, a restart.
// It is turned on before the program's modules are loaded, hence the dynamic import.
import module from 'node:module';

(module as { enableCompileCache?: () => unknown }).enableCompileCache?.();
await import('./program.js');
