// Exec credential plugins (`users[].user.exec`, e.g. `aws eks get-token`): run the command, read
// the ExecCredential it prints, keep it until shortly before it expires.
import { spawn } from 'node:child_process';
import { readFile } from 'node:fs/promises';
import type { Clock } from '../clock.ts';
import {
  KubeCredentialError,
  type ClientCertificate,
  type ExecConfig,
  type KubeCluster,
} from './kubeconfig.ts';

/** Deadline of one run of a plugin; it is killed after it, with every process of its group. */
export const execPluginTimeoutMs = 30_000;
/** A credential is renewed this long before it expires (at most half its lifetime before). */
export const execRefreshMarginMs = 60_000;
/** After a failed run, the same error answers for this long without running the command again. */
export const execFailureHoldMs = 5_000;
/** More output than this is not a credential: the plugin is killed. */
const maxOutputBytes = 1 << 20;
/** About this much of the end of a plugin's error output is kept for the message. */
const maxStderrBytes = 64 << 10;

/** What a plugin gave: a bearer token, a client certificate, or both; and until when. */
export interface ExecCredential {
  readonly token: string | undefined;
  readonly clientCertificate: ClientCertificate | undefined;
  /** Milliseconds since the epoch; undefined: until the apiserver refuses it. */
  readonly expiresAt: number | undefined;
}

/** What an {@link ExecCredentialPlugin} runs and how. */
export interface ExecPluginOptions {
  /** The kubeconfig user, for messages. */
  readonly user: string;
  readonly exec: ExecConfig;
  /** Handed to the plugin in KUBERNETES_EXEC_INFO when the exec config asks for it. */
  readonly cluster: KubeCluster;
  /** Expiry is judged on it. */
  readonly clock: Pick<Clock, 'now'>;
  /** Default {@link execPluginTimeoutMs}. */
  readonly timeoutMs?: number;
  /** The environment the command inherits (default process.env), before the exec config's `env`. */
  readonly env?: Readonly<Record<string, string | undefined>>;
}

/**
 * One user's exec credential plugin. `credential()` answers from its cache while the credential is
 * fresh; past its refresh time it still answers the cached credential at once while that has not
 * expired, and runs the command in the background; with no unexpired credential it runs the
 * command and waits for it. One run at a time (concurrent callers share it), within the deadline.
 * A failed refresh leaves the old credential answering while that has not expired (tried again
 * after {@link execFailureHoldMs}); with none, it throws a KubeCredentialError naming the user and
 * the command, and the same error answers for {@link execFailureHoldMs}. `invalidate(credential)`
 * (the apiserver refused it) makes the next call run the command, if that credential is still the
 * cached one. Safe to call concurrently; never retries by itself.
 */
export class ExecCredentialPlugin {
  private cached: { readonly credential: ExecCredential; readonly refreshAt: number } | undefined;
  private failed: { readonly error: KubeCredentialError; readonly until: number } | undefined;
  private running: Promise<ExecCredential> | undefined;
  private readonly what: string;
  private readonly opts: ExecPluginOptions;

  constructor(opts: ExecPluginOptions) {
    this.opts = opts;
    this.what = `exec credential plugin of user "${opts.user}" (command ${JSON.stringify(opts.exec.command)})`;
  }

  /**
   * A current credential: the cached one while it has not expired (past its refresh time, a run
   * renewing it starts in the background), otherwise the one a run of the plugin gives. Waits only
   * when there is no unexpired credential. Throws KubeCredentialError.
   */
  async credential(): Promise<ExecCredential> {
    const now = this.opts.clock.now();
    const cached = this.cached;
    if (cached !== undefined && now < cached.refreshAt) return cached.credential;
    const usable = cached !== undefined && unexpired(cached.credential, now) ? cached.credential : undefined;
    if (this.failed !== undefined && now < this.failed.until) {
      if (usable !== undefined) return usable;
      throw this.failed.error;
    }
    const running = (this.running ??= this.refresh().finally(() => {
      this.running = undefined;
    }));
    if (usable === undefined) return running;
    // A slow plugin (aws eks get-token) must not hold up requests — lease renewals among them —
    // while the credential they can use is still valid. A failure is kept in `failed`.
    running.catch(ignore);
    return usable;
  }

  /**
   * The apiserver refused `credential`: if it is the cached one, it is forgotten and the next
   * `credential()` runs the plugin. A credential already replaced changes nothing (late refusals
   * of requests sent before a refresh must not discard the new one, nor skip the failure hold).
   * Idempotent.
   */
  invalidate(credential: ExecCredential): void {
    if (this.cached?.credential !== credential) return;
    this.cached = undefined;
    this.failed = undefined;
  }

  private async refresh(): Promise<ExecCredential> {
    const started = this.opts.clock.now();
    try {
      const stdout = await this.run();
      const credential = parseExecCredential(stdout, this.opts.exec.apiVersion);
      this.cached = { credential, refreshAt: refreshTime(started, credential.expiresAt) };
      this.failed = undefined;
      return credential;
    } catch (err) {
      const error =
        err instanceof KubeCredentialError
          ? err
          : new KubeCredentialError(`${this.what}: ${err instanceof Error ? err.message : String(err)}`, {
              cause: err,
            });
      const now = this.opts.clock.now();
      this.failed = { error, until: now + execFailureHoldMs };
      const old = this.cached?.credential;
      if (old !== undefined && unexpired(old, now)) return old;
      throw error;
    }
  }

  /** Runs the command once and returns what it printed; throws KubeCredentialError on any failure. */
  private async run(): Promise<string> {
    const { exec } = this.opts;
    const info = await execInfo(exec, this.opts.cluster);
    const env: Record<string, string | undefined> = { ...(this.opts.env ?? process.env) };
    for (const e of exec.env) env[e.name] = e.value;
    env.KUBERNETES_EXEC_INFO = JSON.stringify(info);
    const timeoutMs = this.opts.timeoutMs ?? execPluginTimeoutMs;
    return new Promise((resolveRun, rejectRun) => {
      const fail = (message: string, cause?: unknown): void => {
        clearTimeout(timer);
        rejectRun(new KubeCredentialError(`${this.what} ${message}`, cause === undefined ? {} : { cause }));
      };
      // A process group of its own (detached): a wrapper script's children are killed with it, and
      // do not keep the pipes (and themselves) alive once it was given up.
      const child = spawn(exec.command, [...exec.args], {
        env,
        stdio: ['ignore', 'pipe', 'pipe'],
        detached: true,
      });
      const kill = (): void => {
        try {
          if (child.pid !== undefined) process.kill(-child.pid, 'SIGKILL');
        } catch {
          // The group is gone already.
        }
        child.stdout.destroy();
        child.stderr.destroy();
      };
      const timer = setTimeout(() => {
        kill();
        fail(`did not finish within ${timeoutMs / 1000} s`);
      }, timeoutMs);
      const out: Buffer[] = [];
      const err: Buffer[] = [];
      let size = 0;
      child.stdout.on('data', (chunk: Buffer) => {
        size += chunk.length;
        if (size > maxOutputBytes) {
          kill();
          fail(`printed more than ${maxOutputBytes} bytes`);
        } else out.push(chunk);
      });
      let errSize = 0;
      child.stderr.on('data', (chunk: Buffer) => {
        // Only the end is shown; a chatty plugin's progress output is not kept in memory.
        errSize += chunk.length;
        err.push(chunk);
        while (errSize > maxStderrBytes && err.length > 1) errSize -= err.shift()?.length ?? 0;
      });
      child.on('error', (e: NodeJS.ErrnoException) => {
        if (e.code === 'ENOENT')
          fail(
            `failed: the command was not found${exec.installHint !== undefined ? `. ${exec.installHint}` : ''}`,
            e,
          );
        else fail(`could not be started: ${e.message}`, e);
      });
      child.on('close', (code, signal) => {
        clearTimeout(timer);
        const stderr = stderrTail(Buffer.concat(err).toString('utf8'));
        if (code === 0) resolveRun(Buffer.concat(out).toString('utf8'));
        else
          fail(
            `${signal !== null ? `was killed by ${signal}` : `exited with code ${code ?? '?'}`}${stderr !== '' ? `: ${stderr}` : ''}`,
          );
      });
    });
  }
}

/** When a credential obtained at `obtained` is renewed: shortly before it expires, never if it does not. Pure. */
export function refreshTime(obtained: number, expiresAt: number | undefined): number {
  if (expiresAt === undefined) return Infinity;
  return expiresAt - Math.min(execRefreshMarginMs, Math.max(0, (expiresAt - obtained) / 2));
}

function ignore(): void {
  // see the caller
}

function unexpired(c: ExecCredential, now: number): boolean {
  return c.expiresAt === undefined || now < c.expiresAt;
}

/** At most this many characters of the end of a plugin's error output go into the message. */
const maxStderrChars = 500;

/**
 * The end of a plugin's error output, on one line, with what looks like a credential masked: the
 * value after `Bearer`, and of a `token` / `…_token` field (JSON `"token":"…"` or `token=…`). kubectl
 * shows a failed plugin's stderr too; it is what says why (`run aws sso login`). Pure.
 */
function stderrTail(text: string): string {
  const masked = text
    .replace(/\b(bearer\s+)[^\s"',;]+/gi, '$1***')
    .replace(/("[\w-]*token"\s*:\s*")(?:[^"\\]|\\.)*"?/gi, '$1***"')
    .replace(
      /(\b[\w-]*token\s*[=:]\s*)("?)[^\s"',;]+"?/gi,
      (_m, key: string, quote: string) => `${key}${quote}***${quote}`,
    );
  const oneLine = masked.trim().replace(/\s*\n\s*/g, ' | ');
  return oneLine.length > maxStderrChars ? `…${oneLine.slice(-maxStderrChars)}` : oneLine;
}

/** KUBERNETES_EXEC_INFO: the ExecCredential request, never interactive, with the cluster if asked. */
async function execInfo(exec: ExecConfig, cluster: KubeCluster): Promise<unknown> {
  const spec: Record<string, unknown> = { interactive: false };
  if (exec.provideClusterInfo) {
    const ca =
      cluster.ca === undefined
        ? undefined
        : 'file' in cluster.ca
          ? await readFile(cluster.ca.file)
          : cluster.ca.data;
    spec.cluster = {
      server: cluster.server,
      ...(cluster.tlsServerName !== undefined ? { 'tls-server-name': cluster.tlsServerName } : {}),
      ...(cluster.insecureSkipTlsVerify ? { 'insecure-skip-tls-verify': true } : {}),
      ...(ca !== undefined ? { 'certificate-authority-data': ca.toString('base64') } : {}),
      ...(cluster.execExtension !== undefined ? { config: cluster.execExtension } : {}),
    };
  }
  return { apiVersion: exec.apiVersion, kind: 'ExecCredential', spec };
}

/**
 * The credential in a plugin's output: an ExecCredential of the API version asked for, with a
 * token, a PEM client certificate and key, or both, and an optional RFC 3339 expirationTimestamp.
 * Throws an Error saying what is wrong. Pure.
 */
export function parseExecCredential(stdout: string, apiVersion: string): ExecCredential {
  let doc: unknown;
  try {
    doc = JSON.parse(stdout);
  } catch {
    // Not JSON.parse's message, nor the error as cause: both quote the output, perhaps a token.
    throw new Error('did not print an ExecCredential: its output is not JSON');
  }
  if (typeof doc !== 'object' || doc === null) throw new Error('did not print an ExecCredential object');
  const { apiVersion: version, kind, status } = doc as Record<string, unknown>;
  if (kind !== 'ExecCredential') throw new Error(`printed kind ${JSON.stringify(kind)}, not ExecCredential`);
  if (version !== apiVersion)
    throw new Error(
      `printed apiVersion ${JSON.stringify(version)}, but the kubeconfig asks for ${apiVersion}`,
    );
  if (typeof status !== 'object' || status === null)
    throw new Error('printed an ExecCredential without status');
  const s = status as Record<string, unknown>;
  const text = (key: string): string | undefined => {
    const v = s[key];
    if (v === undefined || v === null || v === '') return undefined;
    if (typeof v !== 'string') throw new Error(`printed status.${key} that is not a string`);
    return v;
  };
  const token = text('token');
  const cert = text('clientCertificateData');
  const key = text('clientKeyData');
  if ((cert === undefined) !== (key === undefined))
    throw new Error('printed clientCertificateData or clientKeyData without the other');
  if (token === undefined && cert === undefined)
    throw new Error('printed neither a token nor a client certificate and key');
  const expiry = text('expirationTimestamp');
  const expiresAt = expiry === undefined ? undefined : Date.parse(expiry);
  if (expiresAt !== undefined && Number.isNaN(expiresAt))
    throw new Error(`printed expirationTimestamp ${JSON.stringify(expiry)}, which is not a time`);
  return {
    token,
    clientCertificate:
      cert !== undefined && key !== undefined
        ? { cert: { data: Buffer.from(cert) }, key: { data: Buffer.from(key) } }
        : undefined,
    expiresAt,
  };
}
