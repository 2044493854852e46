import type { FastifyBaseLogger } from 'fastify';
import { pino, type Bindings, type ChildLoggerOptions, type Level, type Logger } from 'pino';

const { chindingsSym } = pino.symbols;
type LogArgs = Parameters<Logger['info']>;

/**
 * A request's logger (`request.log`): pino's child of the server's logger with the request's
 * bindings, made the first time something logs through it. Fastify made one for every request:
 * pino's child with options of its own, about a microsecond of a `POST` and objects an idle
 * stream kept for hours, while almost every request logs only its one line, which request-log.ts
 * writes from `chindings` without the child.
 */
export class RequestLogger implements FastifyBaseLogger {
  #child: Logger | undefined;

  constructor(
    private readonly parent: Logger,
    private readonly own: Bindings,
    private readonly options: ChildLoggerOptions,
  ) {}

  /** Fastify's `childLoggerFactory`: this in place of pino's child. */
  static factory(this: void, logger: FastifyBaseLogger, bindings: Bindings, options: ChildLoggerOptions) {
    return new RequestLogger(logger as Logger, bindings, options);
  }

  private get real(): Logger {
    return (this.#child ??= this.parent.child(this.own, this.options));
  }

  /** The bindings as pino writes them into each line (`,"pid":…,"reqId":"…"`), child made or not. */
  get chindings(): string {
    if (this.#child) return (this.#child as unknown as Record<symbol, string>)[chindingsSym]!;
    let text = (this.parent as unknown as Record<symbol, string>)[chindingsSym]!;
    for (const [key, value] of Object.entries(this.own)) text += `,${JSON.stringify(key)}:${JSON.stringify(value)}`;
    return text;
  }

  get level(): string {
    return this.#child?.level ?? this.options.level ?? this.parent.level;
  }

  set level(level: string) {
    this.real.level = level;
  }

  isLevelEnabled(level: Level): boolean {
    return this.#child ? this.#child.isLevelEnabled(level) : this.parent.isLevelEnabled(level);
  }

  /** Bindings added later (the trace's ids, when traces are on). */
  setBindings(bindings: Bindings): void {
    this.real.setBindings(bindings);
  }

  child(bindings: Bindings, options?: ChildLoggerOptions): FastifyBaseLogger {
    return this.real.child(bindings, options);
  }

  fatal(...args: LogArgs): void {
    this.real.fatal(...args);
  }
  error(...args: LogArgs): void {
    this.real.error(...args);
  }
  warn(...args: LogArgs): void {
    this.real.warn(...args);
  }
  info(...args: LogArgs): void {
    this.real.info(...args);
  }
  debug(...args: LogArgs): void {
    this.real.debug(...args);
  }
  trace(...args: LogArgs): void {
    this.real.trace(...args);
  }
  silent(...args: LogArgs): void {
    this.real.silent(...args);
  }
}
