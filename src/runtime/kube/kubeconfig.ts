// What a kubeconfig says, as Skylift uses it: one or several kubeconfig documents, merged as kubectl
// merges them, narrowed to the current context's cluster and user. Pure: reading files, the
// environment and the in-cluster service account is kubeconfigLoad.ts's job.
import { dirname, isAbsolute, join } from 'node:path';

/**
 * A kubeconfig that cannot be used as it stands: malformed, naming what it does not define, or
 * asking for something Skylift does not do (an auth-provider, a proxy). The message names the
 * file and the entry.
 */
export class KubeconfigError extends Error {
  override readonly name = 'KubeconfigError';
}

/**
 * The credentials a kubeconfig names could not be had when a request needed them: a token or
 * certificate file unreadable, an exec plugin that failed. The message names the user and what
 * failed; nothing was sent.
 */
export class KubeCredentialError extends Error {
  override readonly name = 'KubeCredentialError';
}

/** PEM material given in a kubeconfig: a file (read when a connection pool is built) or the bytes themselves. */
export type PemSource = { readonly file: string } | { readonly data: Buffer };

/** A client certificate and its key. */
export interface ClientCertificate {
  readonly cert: PemSource;
  readonly key: PemSource;
}

/** The API versions of exec credential plugins Skylift speaks. */
export const execApiVersions = [
  'client.authentication.k8s.io/v1',
  'client.authentication.k8s.io/v1beta1',
] as const;

/** An exec credential plugin (`users[].user.exec`), validated. */
export interface ExecConfig {
  readonly apiVersion: (typeof execApiVersions)[number];
  /** Resolved against the kubeconfig's folder when relative and containing a `/`; else looked up on PATH. */
  readonly command: string;
  readonly args: readonly string[];
  /** Added to the operator's own environment for the command. */
  readonly env: readonly { readonly name: string; readonly value: string }[];
  readonly installHint: string | undefined;
  /** Whether KUBERNETES_EXEC_INFO carries the cluster (server, CA, the exec extension). */
  readonly provideClusterInfo: boolean;
}

/** The current context's cluster. */
export interface KubeCluster {
  readonly name: string;
  /** The apiserver's URL, without a trailing `/`. */
  readonly server: string;
  /** The CA to trust; undefined: the system's. */
  readonly ca: PemSource | undefined;
  readonly insecureSkipTlsVerify: boolean;
  readonly tlsServerName: string | undefined;
  /** The cluster's `client.authentication.k8s.io/exec` extension, handed to exec plugins that ask for cluster info. */
  readonly execExtension: unknown;
}

/** Impersonation headers a user asks for (`as`, `as-uid`, `as-groups`, `as-user-extra`). */
export interface Impersonation {
  readonly user: string | undefined;
  readonly uid: string | undefined;
  readonly groups: readonly string[];
  readonly extra: Readonly<Record<string, readonly string[]>>;
}

/** The current context's user: at most one of token (or token file), basic auth and exec, plus an optional client certificate. */
export interface KubeUser {
  /** Empty for a context without a user (anonymous). */
  readonly name: string;
  readonly token: string | undefined;
  /** Re-read while running (bound service-account tokens rotate); wins over `token` when both are set. */
  readonly tokenFile: string | undefined;
  readonly basic: { readonly username: string; readonly password: string } | undefined;
  readonly clientCertificate: ClientCertificate | undefined;
  readonly exec: ExecConfig | undefined;
  readonly impersonate: Impersonation | undefined;
}

/**
 * Where Skylift connects and as whom: the current context of a kubeconfig (or the in-cluster
 * service account), validated, with every relative path resolved. Immutable; tokens, files and
 * exec plugins named in it are read or run only when requests are made.
 */
export interface Kubeconfig {
  /** Where it came from, for messages: the file(s), or `in-cluster`. */
  readonly source: string;
  readonly context: string;
  /** The context's namespace, if it names one. */
  readonly namespace: string | undefined;
  readonly cluster: KubeCluster;
  readonly user: KubeUser;
}

type Fields = Readonly<Record<string, unknown>>;

/** One named entry of a kubeconfig file (a cluster, user or context) and the file it came from. */
interface Entry {
  readonly fields: Fields;
  readonly file: string;
}

/**
 * The named entries of one kubeconfig document, or of several merged. Entries keep the file they
 * came from, against whose folder their relative paths resolve.
 */
export interface KubeconfigEntries {
  readonly currentContext: string | undefined;
  readonly clusters: ReadonlyMap<string, Entry>;
  readonly users: ReadonlyMap<string, Entry>;
  readonly contexts: ReadonlyMap<string, Entry>;
}

const sections = [
  { list: 'clusters', field: 'cluster', what: 'cluster' },
  { list: 'users', field: 'user', what: 'user' },
  { list: 'contexts', field: 'context', what: 'context' },
] as const;

/**
 * The entries of one parsed kubeconfig document (`doc`: what JSON or YAML parsing gave; null for an
 * empty file), read from `file`. Throws KubeconfigError for a malformed document, an entry without
 * a name, or a name defined twice. Pure.
 */
export function kubeconfigEntries(doc: unknown, file: string): KubeconfigEntries {
  if (doc === null || doc === undefined) return emptyEntries;
  const top = fieldsOf(doc, `kubeconfig ${file}`);
  const maps = sections.map(({ list, field, what }) => {
    const out = new Map<string, Entry>();
    const items = top[list];
    if (items === undefined || items === null) return out;
    if (!Array.isArray(items)) throw new KubeconfigError(`kubeconfig ${file}: ${list} is not a list`);
    for (const [i, item] of (items as unknown[]).entries()) {
      const where = `kubeconfig ${file}: ${list}[${i}]`;
      const named = fieldsOf(item, where);
      const name = named.name;
      if (typeof name !== 'string' || name === '') throw new KubeconfigError(`${where} has no name`);
      if (out.has(name)) throw new KubeconfigError(`kubeconfig ${file} defines ${what} "${name}" twice`);
      const body = named[field];
      out.set(name, {
        fields: body === undefined || body === null ? {} : fieldsOf(body, `${where}.${field}`),
        file,
      });
    }
    return out;
  });
  const current = top['current-context'];
  if (current !== undefined && current !== null && typeof current !== 'string')
    throw new KubeconfigError(`kubeconfig ${file}: current-context is not a string`);
  return {
    currentContext: current === '' || current === null ? undefined : current,
    clusters: maps[0] ?? new Map(),
    users: maps[1] ?? new Map(),
    contexts: maps[2] ?? new Map(),
  };
}

const emptyEntries: KubeconfigEntries = {
  currentContext: undefined,
  clusters: new Map(),
  users: new Map(),
  contexts: new Map(),
};

/**
 * Several kubeconfig files merged as kubectl merges `$KUBECONFIG`: for every named cluster, user and
 * context, and for current-context, the first file that sets it wins (entries are not merged field
 * by field). Pure.
 */
export function mergeKubeconfigs(files: readonly KubeconfigEntries[]): KubeconfigEntries {
  const firstWins = (pick: (f: KubeconfigEntries) => ReadonlyMap<string, Entry>): Map<string, Entry> => {
    const out = new Map<string, Entry>();
    for (const f of files) for (const [name, entry] of pick(f)) if (!out.has(name)) out.set(name, entry);
    return out;
  };
  return {
    currentContext: files.find((f) => f.currentContext !== undefined)?.currentContext,
    clusters: firstWins((f) => f.clusters),
    users: firstWins((f) => f.users),
    contexts: firstWins((f) => f.contexts),
  };
}

/**
 * The current context of `entries` with its cluster and user, validated: paths resolved against
 * the folder of the file that defined each entry, base64 data decoded. `source` names the files
 * for messages. Throws KubeconfigError naming the entry and field at fault, and for what Skylift
 * does not support (auth-provider, proxy-url, an interactive exec plugin). Pure.
 */
export function currentKubeconfig(entries: KubeconfigEntries, source: string): Kubeconfig {
  const contextName = entries.currentContext;
  if (contextName === undefined) throw new KubeconfigError(`kubeconfig ${source}: no current-context`);
  const context = entries.contexts.get(contextName);
  if (context === undefined)
    throw new KubeconfigError(`kubeconfig ${source}: current-context "${contextName}" is not defined`);
  const ctx = new Reader(context.fields, `kubeconfig ${context.file}: context "${contextName}"`);
  const clusterName = ctx.string('cluster');
  if (clusterName === undefined) throw new KubeconfigError(`${ctx.where} names no cluster`);
  const cluster = entries.clusters.get(clusterName);
  if (cluster === undefined)
    throw new KubeconfigError(`${ctx.where} names cluster "${clusterName}", which is not defined`);
  const userName = ctx.string('user') ?? '';
  const user = userName === '' ? undefined : entries.users.get(userName);
  if (userName !== '' && user === undefined)
    throw new KubeconfigError(`${ctx.where} names user "${userName}", which is not defined`);
  const namespace = ctx.string('namespace');
  return {
    source,
    context: contextName,
    namespace: namespace === '' ? undefined : namespace,
    cluster: readCluster(clusterName, cluster),
    user: user === undefined ? anonymous : readUser(userName, user),
  };
}

const anonymous: KubeUser = {
  name: '',
  token: undefined,
  tokenFile: undefined,
  basic: undefined,
  clientCertificate: undefined,
  exec: undefined,
  impersonate: undefined,
};

function readCluster(name: string, entry: Entry): KubeCluster {
  const r = new Reader(entry.fields, `kubeconfig ${entry.file}: cluster "${name}"`);
  const server = r.string('server');
  if (server === undefined || server === '') throw new KubeconfigError(`${r.where} has no server`);
  let url: URL;
  try {
    url = new URL(server);
  } catch {
    throw new KubeconfigError(`${r.where}: server ${JSON.stringify(server)} is not a URL`);
  }
  if (url.protocol !== 'https:' && url.protocol !== 'http:')
    throw new KubeconfigError(`${r.where}: server ${server} is neither https nor http`);
  if ((r.string('proxy-url') ?? '') !== '')
    throw new KubeconfigError(
      `${r.where} sets proxy-url, which Skylift does not support: reach the apiserver directly`,
    );
  const ca = r.pem('certificate-authority', 'certificate-authority-data', entry.file);
  const insecure = r.boolean('insecure-skip-tls-verify') ?? false;
  if (insecure && ca !== undefined)
    throw new KubeconfigError(
      `${r.where} sets both insecure-skip-tls-verify and a certificate authority: keep one`,
    );
  const tlsServerName = r.string('tls-server-name');
  return {
    name,
    server: server.replace(/\/+$/, ''),
    ca,
    insecureSkipTlsVerify: insecure,
    tlsServerName: tlsServerName === '' ? undefined : tlsServerName,
    execExtension: r.namedList('extensions', 'extension').get(execExtensionName),
  };
}

/** The cluster extension an exec plugin gets in KUBERNETES_EXEC_INFO's `spec.cluster.config`. */
const execExtensionName = 'client.authentication.k8s.io/exec';

function readUser(name: string, entry: Entry): KubeUser {
  const r = new Reader(entry.fields, `kubeconfig ${entry.file}: user "${name}"`);
  const provider = r.fields('auth-provider');
  if (provider !== undefined) {
    const kind = typeof provider.name === 'string' ? provider.name : 'unnamed';
    throw new KubeconfigError(
      `${r.where} authenticates with auth-provider "${kind}", which Skylift does not support (kubectl dropped the built-in gcp and azure ones too): use an exec credential plugin instead, e.g. gke-gcloud-auth-plugin, kubelogin or aws eks get-token`,
    );
  }
  const token = r.string('token');
  const tokenFile = r.path('tokenFile', entry.file);
  const username = r.string('username');
  const password = r.string('password');
  const basic =
    username !== undefined || password !== undefined
      ? { username: username ?? '', password: password ?? '' }
      : undefined;
  const execFields = r.fields('exec');
  const exec = execFields === undefined ? undefined : readExec(execFields, `${r.where}: exec`, entry.file);
  const methods = [
    ...(token !== undefined || tokenFile !== undefined ? ['token'] : []),
    ...(basic !== undefined ? ['username/password'] : []),
    ...(exec !== undefined ? ['exec'] : []),
  ];
  if (methods.length > 1)
    throw new KubeconfigError(
      `${r.where} has more than one way to authenticate (${methods.join(', ')}): keep one`,
    );
  const cert = r.pem('client-certificate', 'client-certificate-data', entry.file);
  const key = r.pem('client-key', 'client-key-data', entry.file);
  if ((cert === undefined) !== (key === undefined))
    throw new KubeconfigError(
      `${r.where} has a client ${cert === undefined ? 'key' : 'certificate'} without its ${cert === undefined ? 'certificate' : 'key'}`,
    );
  return {
    name,
    token: token === '' ? undefined : token,
    tokenFile,
    basic,
    clientCertificate: cert !== undefined && key !== undefined ? { cert, key } : undefined,
    exec,
    impersonate: readImpersonation(r),
  };
}

function readImpersonation(r: Reader): Impersonation | undefined {
  const user = r.string('as');
  const uid = r.string('as-uid');
  const groups = r.strings('as-groups');
  const extraFields = r.fields('as-user-extra') ?? {};
  const extra: Record<string, readonly string[]> = {};
  for (const key of Object.keys(extraFields)) extra[key] = new Reader(extraFields, r.where).strings(key);
  const none =
    user === undefined && uid === undefined && groups.length === 0 && Object.keys(extra).length === 0;
  return none ? undefined : { user, uid, groups, extra };
}

function readExec(fields: Fields, where: string, file: string): ExecConfig {
  const r = new Reader(fields, where);
  const apiVersion = r.string('apiVersion');
  const known = execApiVersions.find((v) => v === apiVersion);
  if (known === undefined)
    throw new KubeconfigError(
      `${where}: apiVersion ${JSON.stringify(apiVersion ?? '')} is not supported: use ${execApiVersions.join(' or ')}`,
    );
  const command = r.string('command');
  if (command === undefined || command === '') throw new KubeconfigError(`${where} has no command`);
  const env = r.list('env').map((item, i) => {
    const e = new Reader(fieldsOf(item, `${where}.env[${i}]`), `${where}.env[${i}]`);
    const name = e.string('name');
    if (name === undefined || name === '') throw new KubeconfigError(`${e.where} has no name`);
    return { name, value: e.string('value') ?? '' };
  });
  const mode = r.string('interactiveMode');
  if (mode === undefined && known === 'client.authentication.k8s.io/v1')
    throw new KubeconfigError(`${where}: interactiveMode is required with ${known}`);
  if (mode !== undefined && !['Never', 'IfAvailable', 'Always'].includes(mode))
    throw new KubeconfigError(
      `${where}: interactiveMode ${JSON.stringify(mode)} is not Never, IfAvailable or Always`,
    );
  if (mode === 'Always')
    throw new KubeconfigError(
      `${where}: interactiveMode is Always, but Skylift runs exec plugins without a terminal: use IfAvailable or Never`,
    );
  const installHint = r.string('installHint');
  return {
    apiVersion: known,
    // kubectl resolves a command with a path separator against the kubeconfig's folder, and looks a bare name up on PATH.
    command: command.includes('/') ? resolvePath(command, file) : command,
    args: r.strings('args'),
    env,
    installHint: installHint === '' ? undefined : installHint,
    provideClusterInfo: r.boolean('provideClusterInfo') ?? false,
  };
}

/** `path` resolved against the folder of the kubeconfig `file` (kubectl's rule for relative paths). Pure. */
export function resolvePath(path: string, file: string): string {
  return isAbsolute(path) ? path : join(dirname(file), path);
}

/** A JSON object's fields, or a KubeconfigError naming `where`. */
function fieldsOf(value: unknown, where: string): Fields {
  if (typeof value !== 'object' || value === null || Array.isArray(value))
    throw new KubeconfigError(`${where} is not a mapping`);
  return value as Fields;
}

/** Typed reads of an entry's fields; a field of the wrong type is a KubeconfigError naming it. */
class Reader {
  private readonly f: Fields;
  readonly where: string;

  constructor(f: Fields, where: string) {
    this.f = f;
    this.where = where;
  }

  private wrong(key: string, want: string): KubeconfigError {
    return new KubeconfigError(`${this.where}: ${key} is not ${want}`);
  }

  /** A string field; null and absent are undefined. */
  string(key: string): string | undefined {
    const v = this.f[key];
    if (v === undefined || v === null) return undefined;
    if (typeof v !== 'string') throw this.wrong(key, 'a string');
    return v;
  }

  boolean(key: string): boolean | undefined {
    const v = this.f[key];
    if (v === undefined || v === null) return undefined;
    if (typeof v !== 'boolean') throw this.wrong(key, 'true or false');
    return v;
  }

  fields(key: string): Fields | undefined {
    const v = this.f[key];
    if (v === undefined || v === null) return undefined;
    return fieldsOf(v, `${this.where}: ${key}`);
  }

  list(key: string): readonly unknown[] {
    const v = this.f[key];
    if (v === undefined || v === null) return [];
    if (!Array.isArray(v)) throw this.wrong(key, 'a list');
    return v as unknown[];
  }

  strings(key: string): string[] {
    return this.list(key).map((s, i) => {
      if (typeof s !== 'string') throw this.wrong(`${key}[${i}]`, 'a string');
      return s;
    });
  }

  /** A `[{name, <field>}]` list as a map of name to the value of `field`. */
  namedList(key: string, field: string): Map<string, unknown> {
    const out = new Map<string, unknown>();
    for (const [i, item] of this.list(key).entries()) {
      const named = fieldsOf(item, `${this.where}: ${key}[${i}]`);
      if (typeof named.name === 'string') out.set(named.name, named[field]);
    }
    return out;
  }

  /** A path field, resolved against the folder of `file`; empty is undefined. */
  path(key: string, file: string): string | undefined {
    const v = this.string(key);
    return v === undefined || v === '' ? undefined : resolvePath(v, file);
  }

  /** PEM material from a path field or a base64 data field; both set is an error, as kubectl says. */
  pem(fileKey: string, dataKey: string, file: string): PemSource | undefined {
    const path = this.path(fileKey, file);
    const data = this.string(dataKey);
    if (path !== undefined && data !== undefined && data !== '')
      throw new KubeconfigError(`${this.where} sets both ${fileKey} and ${dataKey}: keep one`);
    if (path !== undefined) return { file: path };
    if (data === undefined || data === '') return undefined;
    const bytes = Buffer.from(data, 'base64');
    if (bytes.length === 0) throw this.wrong(dataKey, 'base64');
    return { data: bytes };
  }
}
