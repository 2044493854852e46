// Preloaded into a server under test (NODE_OPTIONS=--import=<this file>): writes a line to stderr
// for every module of OpenTelemetry the process resolves, by import or by require, and for each
// module of the service that uses it.
import { registerHooks } from 'node:module';

const TRACING =
  /\/@opentelemetry\/|\/dist\/tracing\/(sdk|spans|delivery-attributes)\.js$|\/dist\/http\/plugins\/trace\.js$/;

registerHooks({
  resolve(specifier, context, next) {
    const resolved = next(specifier, context);
    if (TRACING.test(resolved.url)) process.stderr.write(`otel module: ${resolved.url}\n`);
    return resolved;
  },
});
