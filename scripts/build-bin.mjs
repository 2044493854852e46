// The command's entry point is run as a program (`npx plant-store`, a reader's shell in the docs'
// test): tsc writes it without the execute bit, which npm sets on the bins of a package it
// installs but not on the project's own, so a fresh clone's `npx plant-store` said "Permission
// denied" (a CI run of the docs test, and by hand after `npm ci`).
import { chmodSync } from 'node:fs';

chmodSync(new URL('../dist/cli/main.js', import.meta.url), 0o755);
