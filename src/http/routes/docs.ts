import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import type { FastifyInstance } from 'fastify';
import { HttpError } from '../http-error.js';

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

// The page's own script: Swagger UI with two small plugins.
// - Guide after the operations: the document's description opens with a short introduction and
//   continues with "## " sections (tokens, the client, errors, rate limits). Shown whole above the
//   operations, it pushed them ~1,750 px down; the page shows the introduction on top, so that
//   Authorize and the operations are in the first screen, and the sections after the operations.
// - Readable types: Swagger UI labels an allOf by its parts, and a part that is a $ref not yet
//   resolved as "any": NewPlant read "(object & any)". An "any" part of an allOf adds nothing and
//   equal parts say one thing, so "(object & any)" is written "object". Likewise a oneOf of $refs
//   (a batch's operation: "object | (any | any | any | any)") adds nothing to the type it states.
// validatorUrl: null keeps Swagger UI from sending the document to its public validator.
const INITIALIZER = `'use strict';
function splitDescription(text) {
  const at = typeof text === 'string' ? text.search(/^## /m) : -1;
  return at < 0 ? [text, ''] : [text.slice(0, at).trim(), text.slice(at)];
}

function readableType(type) {
  for (let before = ''; before !== type; ) {
    before = type;
    type = type.replace(/\\(([^()|]*&[^()|]*)\\)/g, (group, inner) => {
      const parts = [...new Set(inner.split(' & ').filter((part) => part !== 'any'))];
      return parts.length === 0 ? 'any' : parts.length === 1 ? parts[0] : '(' + parts.join(' & ') + ')';
    });
  }
  return type.replace(/^(\\w+) \\| \\(any(?: \\| any)*\\)$/, '$1');
}

function GuideAfterOperations(system) {
  const h = system.React.createElement;
  const fullDescription = () => system.specSelectors.info().get('description');
  return {
    statePlugins: {
      spec: {
        wrapSelectors: {
          selectInfoDescriptionField: () => () => splitDescription(fullDescription())[0],
        },
      },
    },
    wrapComponents: {
      Models: (Models, { getComponent }) => (props) => {
        const Markdown = getComponent('Markdown', true);
        const guide = splitDescription(fullDescription())[1];
        return h(
          'div',
          null,
          guide && h('section', { className: 'guide info' }, h('div', { className: 'description' }, h(Markdown, { source: guide }))),
          h(Models, props),
        );
      },
    },
  };
}

function ReadableTypes(system) {
  const h = system.React.createElement;
  return {
    wrapComponents: {
      JSONSchema202012KeywordType: () => ({ schema, isCircular }) =>
        h(
          'strong',
          { className: 'json-schema-2020-12__attribute json-schema-2020-12__attribute--primary' },
          readableType(system.fn.jsonSchema202012.getType(schema)) + (isCircular ? ' [circular]' : ''),
        ),
    },
  };
}

window.ui = SwaggerUIBundle({
  url: new URL('openapi.json', document.baseURI).href,
  dom_id: '#swagger-ui',
  deepLinking: true,
  tryItOutEnabled: true,
  displayRequestDuration: true,
  persistAuthorization: false,
  validatorUrl: null,
  docExpansion: 'list',
  defaultModelsExpandDepth: 1,
  plugins: [GuideAfterOperations, ReadableTypes],
});
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
    ['docs.js', { type: 'text/javascript; charset=utf-8', body: INITIALIZER }],
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
