import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import type { FastifyInstance } from 'fastify';
import { HttpError } from '../errors/http-error.js';
import { PAGE_SCRIPT } from './docs-script.js';

/**
 * The page may load scripts, styles, images and data from this server only, so nothing of it
 * can come from a CDN. Swagger UI sets inline styles on elements and uses data: URIs for its
 * icons, hence those two allowances; it needs no inline script and no eval.
 */
export const DOCS_CSP = [
  "default-src 'none'",
  "script-src 'self'",
  "style-src 'self' 'unsafe-inline'",
  "img-src 'self' data:",
  "font-src 'self' data:",
  "connect-src 'self'",
  "base-uri 'none'",
  "form-action 'none'",
  "frame-ancestors 'none'",
].join('; ');

// Relative URLs, so the page also works when the service sits under a path prefix.
const PAGE = `<!doctype html>
<html lang="en">
  <head>
    <meta charset="utf-8">
    <meta name="viewport" content="width=device-width, initial-scale=1">
    <title>Plant Store API reference</title>
    <link rel="stylesheet" href="docs/swagger-ui.css">
    <link rel="icon" type="image/png" href="docs/favicon-32x32.png">
  </head>
  <body>
    <div id="swagger-ui"></div>
    <script src="docs/swagger-ui-bundle.js"></script>
    <script src="docs/docs.js"></script>
  </body>
</html>
`;

interface Asset {
  type: string;
  body: string | Buffer;
}

/** The files the page loads: Swagger UI's from the installed swagger-ui-dist package, and its initializer. */
function loadAssets(): Map<string, Asset> {
  const dist = dirname(createRequire(import.meta.url).resolve('swagger-ui-dist/package.json'));
  const file = (name: string) => readFileSync(join(dist, name));
  return new Map<string, Asset>([
    ['swagger-ui.css', { type: 'text/css; charset=utf-8', body: file('swagger-ui.css') }],
    ['swagger-ui-bundle.js', { type: 'text/javascript; charset=utf-8', body: file('swagger-ui-bundle.js') }],
    ['favicon-32x32.png', { type: 'image/png', body: file('favicon-32x32.png') }],
    ['docs.js', { type: 'text/javascript; charset=utf-8', body: PAGE_SCRIPT }],
  ]);
}

/** `GET /docs`: the interactive API reference, rendered in the browser from `GET /openapi.json`. */
export async function docsRoutes(app: FastifyInstance): Promise<void> {
  // Read on first use: the bundle is megabytes that start-up and memory need not carry until then.
  let assets: Map<string, Asset> | undefined;

  app.operation(
    'getApiReference',
    async (_request, reply) =>
      reply
        .type('text/html; charset=utf-8')
        .headers({
          'content-security-policy': DOCS_CSP,
          'x-content-type-options': 'nosniff',
          'referrer-policy': 'no-referrer',
          'cache-control': 'no-cache',
        })
        .send(PAGE),
    { rawResponse: true },
  );

  app.operation(
    'getApiReferenceAsset',
    async (request, reply) => {
      const { file } = request.params;
      assets ??= loadAssets();
      const asset = assets.get(file);
      if (!asset) throw new HttpError(404, `no file ${file} in the API reference`);
      return reply
        .type(asset.type)
        .headers({ 'x-content-type-options': 'nosniff', 'cache-control': 'public, max-age=3600' })
        .send(asset.body);
    },
    { rawResponse: true },
  );
}
