// The layering of src/, checked by `npm run lint`. Arrows point down only:
//
//   cli/                         the command line (serve, migrate, token, webhook, export/import)
//   http/                        the HTTP edge: app, plugins, routes, server
//   services.ts                  the composition: builds the services every entry point uses
//   use-cases/ auth/ events/ feed/ metrics/   what the service does
//   store/                       where it keeps things, by kind of record, in SQLite and PostgreSQL
//   tracing/                     the seam to OpenTelemetry, loaded only when traces are on
//   config/ openapi/ log*.ts     settings, the contract, logging (log.ts and its output)
//   domain/ json/                records, rules and errors; the exact JSON reader and writer
//
// See docs/explanations/architecture.md.
const layer = (...paths) => `^src/(${paths.join('|')})`;

module.exports = {
  forbidden: [
    {
      name: 'no-circular',
      severity: 'error',
      comment: 'No module reaches itself again.',
      from: {},
      to: { circular: true },
    },
    {
      name: 'domain-is-a-leaf',
      severity: 'error',
      comment: 'domain/ and json/ import nothing of the project but themselves.',
      from: { path: '^src/(domain|json)/' },
      to: { path: '^src/', pathNot: '^src/$1/' },
    },
    {
      name: 'settings-and-contract-below-the-rest',
      severity: 'error',
      comment:
        'config/, openapi/ and log.ts build on domain/ and json/ only (openapi/ also on the types of the document: below).',
      from: { path: layer('config/', 'openapi/', 'log(-output)?\\.ts') },
      to: {
        path: '^src/',
        pathNot: layer('domain/', 'json/', 'config/', 'openapi/', 'log(-output)?\\.ts', 'client/schema\\.ts$'),
      },
    },
    {
      // schema.ts is the document's types, generated from it, importing nothing: it ships with
      // the client, but it is the contract, a leaf. Its int64s are what a client may send
      // (number | bigint); the server sees them as its validators leave them, which
      // openapi/operation-types.ts says, so the rest of the server takes them from there.
      name: 'contract-types-through-openapi',
      severity: 'error',
      comment:
        'Only openapi/operation-types.ts imports client/schema.ts: the server sees the contract as it validates it.',
      from: { path: '^src/', pathNot: '^src/(client/|openapi/operation-types\\.ts$)' },
      to: { path: '^src/client/schema\\.ts$' },
    },
    {
      name: 'contract-types-are-types',
      severity: 'error',
      comment: 'The server imports types from client/schema.ts, never code (it has none, and must not gain any).',
      from: { path: '^src/openapi/' },
      to: { path: '^src/client/', dependencyTypesNot: ['type-only'] },
    },
    {
      name: 'tracing-below-the-stores',
      severity: 'error',
      comment:
        'tracing/ builds on domain/, json/, config/ and log.ts only: the stores, use-cases and events ask it, it asks none of them.',
      from: { path: '^src/tracing/' },
      to: { path: '^src/', pathNot: layer('domain/', 'json/', 'config/', 'log(-output)?\\.ts', 'tracing/') },
    },
    {
      name: 'stores-below-the-use-cases',
      severity: 'error',
      comment: 'store/ never imports what uses it: use-cases, auth, events, metrics, the edges.',
      from: { path: '^src/store/' },
      to: { path: '^src/', pathNot: layer('domain/', 'json/', 'config/', 'store/', 'tracing/') },
    },
    {
      name: 'use-cases-never-import-the-edges',
      severity: 'error',
      comment: 'use-cases/, auth/, events/, feed/ and metrics/ never import http/, cli/ or the composition.',
      from: { path: layer('use-cases/', 'auth/', 'events/', 'feed/', 'metrics/') },
      to: { path: layer('http/', 'cli/', 'services\\.ts', 'client/') },
    },
    {
      name: 'use-cases-on-top-of-their-layer',
      severity: 'error',
      comment:
        'auth/, events/, feed/ and metrics/ serve the use-cases and stand apart from each other: no folder cycles.',
      from: { path: layer('auth/', 'events/', 'feed/', 'metrics/') },
      to: { path: layer('use-cases/', 'auth/', 'events/', 'feed/', 'metrics/'), pathNot: '^src/$1' },
    },
    {
      name: 'feed-through-its-index',
      severity: 'error',
      comment:
        'The change feed (the hub, reading the log, the fan-out to streams) is one module: outside src/feed/ it is imported through feed/index.ts only.',
      from: { path: '^src/', pathNot: '^src/feed/' },
      to: { path: '^src/feed/', pathNot: '^src/feed/index\\.ts$' },
    },
    {
      name: 'feed-knows-no-http',
      severity: 'error',
      comment:
        "The feed writes to sinks the edge gives it: it imports neither http/ nor Node.js HTTP or sockets (the SSE framing is the edge's).",
      from: { path: '^src/feed/' },
      to: { path: ['^src/http/', '^(node:)?(http|https|http2|net)$'] },
    },
    {
      name: 'composition-below-the-edges',
      severity: 'error',
      comment: 'services.ts builds services; it does not know about HTTP or the command line.',
      from: { path: '^src/services\\.ts$' },
      to: { path: layer('http/', 'cli/', 'client/') },
    },
    {
      name: 'http-below-cli',
      severity: 'error',
      comment: 'The HTTP edge does not import the command line.',
      from: { path: '^src/http/' },
      to: { path: layer('cli/', 'client/') },
    },
    {
      name: 'client-stands-alone',
      severity: 'error',
      comment: 'The typed client ships to users (packages/client): it takes only the JSON reader and writer.',
      from: { path: '^src/client/' },
      to: { path: '^src/', pathNot: layer('client/', 'json/(read|write)-json\\.ts$') },
    },
    {
      name: 'client-runs-in-browsers',
      severity: 'error',
      comment: 'What @plant-store/client ships imports no Node.js module: it runs in browsers as well.',
      from: { path: '^src/(client/|json/(read|write)-json\\.ts$)' },
      to: { dependencyTypes: ['core'] },
    },
  ],
  options: {
    doNotFollow: { path: 'node_modules' },
    tsPreCompilationDeps: true,
    tsConfig: { fileName: 'tsconfig.json' },
    enhancedResolveOptions: { extensions: ['.ts', '.js'] },
  },
};
