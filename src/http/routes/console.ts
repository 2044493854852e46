import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import type { FastifyInstance } from 'fastify';
import { HttpError } from '../errors/http-error.js';

/**
 * Everything from this server, nothing inline (the bundle has no inline script, the style sheet
 * is a file and the page sets no style attribute), and never in a frame (clickjacking a page
 * that holds a token). `connect-src` follows `default-src`: the API and its streams are here.
 */
export const CONSOLE_CSP = [
  "default-src 'self'",
  "object-src 'none'",
  "base-uri 'none'",
  "form-action 'none'",
  "frame-ancestors 'none'",
].join('; ');

const TYPES: Record<string, string> = {
  'index.html': 'text/html; charset=utf-8',
  'console.js': 'text/javascript; charset=utf-8',
  'console.css': 'text/css; charset=utf-8',
  'icon.svg': 'image/svg+xml',
};

/**
 * The built console (`npm run build`: scripts/build-console.mjs), in the package's dist/console,
 * found through the package's own name so that it is the same folder whether this module runs
 * from dist/ or, in the tests, from src/.
 */
function loadFiles(): Map<string, Buffer> {
  const root = dirname(createRequire(import.meta.url).resolve('plant-store/package.json'));
  return new Map(Object.keys(TYPES).map((name) => [name, readFileSync(join(root, 'dist', 'console', name))]));
}

/** `GET /console`: the store's web console, a client of the API served from the package. */
export async function consoleRoutes(app: FastifyInstance): Promise<void> {
  // Read on first use, as /docs does: start-up need not read files most starts never serve.
  let files: Map<string, Buffer> | undefined;
  const file = (name: string) => (files ??= loadFiles()).get(name);

  app.operation(
    'getConsole',
    async (_request, reply) =>
      reply
        .type(TYPES['index.html']!)
        .headers({
          'content-security-policy': CONSOLE_CSP,
          'x-content-type-options': 'nosniff',
          'referrer-policy': 'no-referrer',
          'cache-control': 'no-cache',
        })
        .send(file('index.html')),
    { rawResponse: true },
  );

  app.operation(
    'getConsoleAsset',
    async (request, reply) => {
      const name = request.params.file;
      const body = name === 'index.html' ? undefined : TYPES[name] && file(name);
      if (!body) throw new HttpError(404, `no file ${name} in the console`);
      return reply
        .type(TYPES[name]!)
        .headers({ 'x-content-type-options': 'nosniff', 'cache-control': 'no-cache' })
        .send(body);
    },
    { rawResponse: true },
  );
}
