// How a request authenticates as the kubeconfig's user: the headers it carries and the client
// certificate its connection presents.
import { readFile } from 'node:fs/promises';
import type { Clock } from '../clock.ts';
import { ExecCredentialPlugin, type ExecCredential } from './execPlugin.ts';
import { KubeCredentialError, type ClientCertificate, type Kubeconfig, type KubeUser } from './kubeconfig.ts';

/** A token file is read again when its last read is this old (client-go's period too): bound tokens rotate. */
export const tokenFileRereadMs = 60_000;

/**
 * What one request authenticates with. Hand the same object to {@link UserCredentials.rejected}
 * when the apiserver refuses the request: it tells which credential was refused.
 */
export interface RequestAuth {
  /** Header name and value pairs (Authorization, Impersonate-*); a name may repeat. */
  readonly headers: readonly [string, string][];
  /** The certificate the TLS connection presents; undefined: none. */
  readonly clientCertificate: ClientCertificate | undefined;
}

/** What {@link UserCredentials} needs besides the kubeconfig. */
export interface UserCredentialOptions {
  /** Token-file age and exec credential expiry are judged on it. */
  readonly clock: Pick<Clock, 'now'>;
  /** Deadline of one exec plugin run (default execPluginTimeoutMs). */
  readonly execTimeoutMs?: number;
  /** The environment exec plugins inherit (default process.env). */
  readonly env?: Readonly<Record<string, string | undefined>>;
}

/**
 * The kubeconfig user's credentials, per request: a static token, a token file (read again once
 * {@link tokenFileRereadMs} old; the last good token is kept while it cannot be read), basic auth,
 * an exec plugin's token and certificate (cached until shortly before expiry), a client
 * certificate, and impersonation headers. `forRequest()` may block on a file read or an exec
 * plugin run (which has its own deadline) and throws KubeCredentialError naming the user when no
 * credential can be had. Safe to call concurrently.
 */
export class UserCredentials {
  private readonly user: KubeUser;
  private readonly plugin: ExecCredentialPlugin | undefined;
  private readonly fixedHeaders: readonly [string, string][];
  private fileToken: FileToken | undefined;
  private reading: Promise<FileToken> | undefined;
  /** The credential each RequestAuth handed out came from, for rejected(). */
  private readonly issued = new WeakMap<RequestAuth, ExecCredential | FileToken>();

  private readonly opts: UserCredentialOptions;

  constructor(config: Kubeconfig, opts: UserCredentialOptions) {
    this.opts = opts;
    this.user = config.user;
    const exec = config.user.exec;
    this.plugin =
      exec === undefined
        ? undefined
        : new ExecCredentialPlugin({
            user: config.user.name,
            exec,
            cluster: config.cluster,
            clock: opts.clock,
            ...(opts.execTimeoutMs !== undefined ? { timeoutMs: opts.execTimeoutMs } : {}),
            ...(opts.env !== undefined ? { env: opts.env } : {}),
          });
    this.fixedHeaders = [...basicHeader(config.user), ...impersonationHeaders(config.user)];
  }

  /** The headers and client certificate of the next request. */
  async forRequest(): Promise<RequestAuth> {
    const { user } = this;
    if (this.plugin !== undefined) {
      const c = await this.plugin.credential();
      const auth: RequestAuth = {
        headers: [...bearer(c.token), ...this.fixedHeaders],
        clientCertificate: c.clientCertificate ?? user.clientCertificate,
      };
      this.issued.set(auth, c);
      return auth;
    }
    if (user.tokenFile !== undefined) {
      const read = await this.tokenFromFile(user.tokenFile);
      const auth: RequestAuth = {
        headers: [...bearer(read.token), ...this.fixedHeaders],
        clientCertificate: user.clientCertificate,
      };
      this.issued.set(auth, read);
      return auth;
    }
    return {
      headers: [...bearer(user.token), ...this.fixedHeaders],
      clientCertificate: user.clientCertificate,
    };
  }

  /**
   * The apiserver refused the request sent with `auth` (from {@link forRequest}) as
   * unauthenticated (401): if the exec credential or token-file read it carried is still the one
   * in use, it is dropped, and the next request runs the exec plugin again or reads the token file
   * again. A refusal of a credential already replaced (a late answer to a request sent before a
   * rotation) changes nothing, as in client-go. Idempotent.
   */
  rejected(auth: RequestAuth): void {
    const source = this.issued.get(auth);
    if (source === undefined) return;
    if (this.fileToken === source) this.fileToken = undefined;
    else if ('expiresAt' in source) this.plugin?.invalidate(source);
  }

  private async tokenFromFile(path: string): Promise<FileToken> {
    const last = this.fileToken;
    if (last !== undefined && this.opts.clock.now() - last.readAt < tokenFileRereadMs) return last;
    this.reading ??= readFile(path, 'utf8')
      .then((text) => {
        const token = text.trim();
        if (token === '') throw new Error('the file is empty');
        const read = { token, readAt: this.opts.clock.now() };
        this.fileToken = read;
        return read;
      })
      .finally(() => {
        this.reading = undefined;
      });
    try {
      return await this.reading;
    } catch (err) {
      if (last !== undefined) return last;
      throw new KubeCredentialError(
        `read the token file ${path} of user "${this.user.name}": ${err instanceof Error ? err.message : String(err)}`,
        { cause: err },
      );
    }
  }
}

/** One read of a token file. */
interface FileToken {
  readonly token: string;
  readonly readAt: number;
}

function bearer(token: string | undefined): [string, string][] {
  return token === undefined ? [] : [['authorization', `Bearer ${token}`]];
}

function basicHeader(user: KubeUser): [string, string][] {
  if (user.basic === undefined) return [];
  const pair = Buffer.from(`${user.basic.username}:${user.basic.password}`).toString('base64');
  return [['authorization', `Basic ${pair}`]];
}

function impersonationHeaders(user: KubeUser): [string, string][] {
  const as = user.impersonate;
  if (as === undefined) return [];
  const out: [string, string][] = [];
  if (as.user !== undefined) out.push(['impersonate-user', as.user]);
  if (as.uid !== undefined) out.push(['impersonate-uid', as.uid]);
  for (const g of as.groups) out.push(['impersonate-group', g]);
  for (const [key, values] of Object.entries(as.extra))
    for (const v of values) out.push([`impersonate-extra-${encodeURIComponent(key)}`, v]);
  return out;
}
