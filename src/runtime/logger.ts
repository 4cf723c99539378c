import { Writable } from 'node:stream';
import { pino, type Logger } from 'pino';

/** The logger every module is handed: pino's. */
export type { Logger };

/** Log output format. */
export type LogFormat = 'json' | 'text';

/** Paths never logged: Secrets' data, passwords, tokens. */
const redact = [
  'password',
  '*.password',
  '*.masterUserPassword',
  '*.MasterUserPassword',
  'data',
  '*.data',
  'stringData',
  '*.stringData',
  'token',
  '*.token',
  'authorization',
  '*.authorization',
];

/**
 * The process logger: pino JSON lines (or a plain text rendering of the same
 * records). Reconcile loggers are children carrying reconcileId, kind,
 * namespace and name. Secrets are redacted by path.
 */
export function createLogger(
  opts: { level?: string; format?: LogFormat; destination?: NodeJS.WritableStream } = {},
): Logger {
  const level = opts.level ?? 'info';
  const dest = opts.destination ?? process.stdout;
  if ((opts.format ?? 'json') === 'json') {
    return pino({ level, redact, base: { app: 'skylift' }, timestamp: pino.stdTimeFunctions.isoTime }, dest);
  }
  return pino({ level, redact, base: null, timestamp: pino.stdTimeFunctions.isoTime }, textStream(dest));
}

/** Renders pino's JSON lines as `time LEVEL msg key=value …`. */
function textStream(dest: NodeJS.WritableStream): Writable {
  const names: Record<number, string> = {
    10: 'TRACE',
    20: 'DEBUG',
    30: 'INFO',
    40: 'WARN',
    50: 'ERROR',
    60: 'FATAL',
  };
  return new Writable({
    write(chunk: Buffer, _enc, done) {
      for (const line of chunk.toString('utf8').split('\n')) {
        if (line === '') continue;
        const { time, level, msg, ...rest } = JSON.parse(line) as Record<string, unknown>;
        const fields = Object.entries(rest)
          .map(([k, v]) => `${k}=${typeof v === 'string' ? v : JSON.stringify(v)}`)
          .join(' ');
        dest.write(
          `${String(time)} ${names[Number(level)] ?? String(level)} ${String(msg)}${fields === '' ? '' : ` ${fields}`}\n`,
        );
      }
      done();
    },
  });
}
