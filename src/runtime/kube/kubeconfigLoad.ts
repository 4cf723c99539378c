// Finding and reading the kubeconfig, in the order Skylift always used (client-node's): an explicit
// path, else $KUBECONFIG (several files merged as kubectl merges them), else ~/.kube/config, else
// the in-cluster service account.
import { existsSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { isIPv6 } from 'node:net';
import { delimiter, join } from 'node:path';
import type * as Yaml from 'yaml';
import {
  currentKubeconfig,
  KubeconfigError,
  kubeconfigEntries,
  mergeKubeconfigs,
  type Kubeconfig,
} from './kubeconfig.ts';

/** Where a pod's service-account token, CA and namespace are mounted. */
export const serviceAccountDir = '/var/run/secrets/kubernetes.io/serviceaccount';

/** What loading may read besides files: for tests. */
export interface KubeconfigLoadOptions {
  /** KUBECONFIG, HOME, KUBERNETES_SERVICE_HOST and _PORT are read from here (default process.env). */
  readonly env?: Readonly<Record<string, string | undefined>>;
  /** Default {@link serviceAccountDir}. */
  readonly serviceAccountDir?: string;
}

/**
 * The kubeconfig Skylift connects with: the file at `path` if given; else the files `$KUBECONFIG`
 * lists (missing ones skipped, for each named entry and for current-context the first file
 * wins); else `$HOME/.kube/config` if it exists; else the in-cluster service account, when its
 * token is mounted. Throws KubeconfigError when none applies or what it found cannot be used.
 * Reads files synchronously (small, once at start); never blocks on the network, runs nothing.
 */
export function loadKubeconfig(path?: string, opts: KubeconfigLoadOptions = {}): Kubeconfig {
  const env = opts.env ?? process.env;
  const saDir = opts.serviceAccountDir ?? serviceAccountDir;
  if (path !== undefined && path !== '') return fromFiles([path]);
  const listed = [...new Set((env.KUBECONFIG ?? '').split(delimiter).filter((p) => p !== ''))];
  if (listed.length > 0) {
    const present = listed.filter((p) => existsSync(p));
    if (present.length === 0)
      throw new KubeconfigError(`none of the files KUBECONFIG lists exists: ${listed.join(', ')}`);
    return fromFiles(present);
  }
  const home = env.HOME;
  const homeConfig = home !== undefined && home !== '' ? join(home, '.kube', 'config') : undefined;
  if (homeConfig !== undefined && existsSync(homeConfig)) return fromFiles([homeConfig]);
  if (existsSync(join(saDir, 'token'))) return inCluster(env, saDir);
  throw new KubeconfigError(
    `no kubeconfig: give --kubeconfig or set KUBECONFIG, or create ${homeConfig ?? '~/.kube/config'}; not in a cluster either (no ${join(saDir, 'token')})`,
  );
}

function fromFiles(files: readonly string[]): Kubeconfig {
  const entries = files.map((file) => kubeconfigEntries(parseKubeconfigText(readText(file), file), file));
  return currentKubeconfig(mergeKubeconfigs(entries), files.join(delimiter));
}

function readText(file: string): string {
  try {
    return readFileSync(file, 'utf8');
  } catch (err) {
    throw new KubeconfigError(
      `read kubeconfig ${file}: ${err instanceof Error ? err.message : String(err)}`,
      {
        cause: err,
      },
    );
  }
}

const requireFromHere = createRequire(import.meta.url);

/**
 * A kubeconfig's text parsed: JSON as JSON; anything else as YAML, with the `yaml` package loaded
 * only then (it costs the process ~12 MiB: the in-cluster config and JSON kubeconfigs never load
 * it). Empty text is null (an empty kubeconfig). Throws KubeconfigError naming `file` and, for bad
 * YAML, the line and column and the kind of error, never any of the file's text (it holds secrets).
 */
export function parseKubeconfigText(text: string, file: string): unknown {
  const body = text.replace(/^\uFEFF/, '');
  if (body.trim() === '') return null;
  if (body.trimStart().startsWith('{')) {
    try {
      return JSON.parse(body);
    } catch {
      // A YAML flow mapping starts with { too.
    }
  }
  const yaml = requireFromHere('yaml') as typeof Yaml;
  try {
    // logLevel 'error': yaml's warnings (an unknown tag …) would go to process.emitWarning, quoting
    // the line they are about.
    return yaml.parse(body, { logLevel: 'error' });
  } catch (err) {
    // Neither yaml's message (it quotes the offending and neighbouring lines: tokens, passwords,
    // keys) nor the error itself (a logger may print the cause) goes into the error.
    throw new KubeconfigError(`kubeconfig ${file} is not valid YAML${yamlErrorWhere(err, yaml)}`);
  }
}

/**
 * Where a YAML parse error is and what kind it is, from its position and code alone: yaml's own
 * messages quote source text, some even in their first sentence (`Invalid escape sequence \q`,
 * `Unresolved tag: !x`). Pure.
 */
function yamlErrorWhere(err: unknown, yaml: typeof Yaml): string {
  if (!(err instanceof yaml.YAMLError)) return '';
  const at = err.linePos?.[0];
  const where = at !== undefined ? ` at line ${at.line}, column ${at.col}` : '';
  return `${where}: ${yamlErrorKinds[err.code] ?? err.code}`;
}

/** What each of yaml's error codes means, in words that quote nothing from the file. */
const yamlErrorKinds: Readonly<Record<string, string>> = {
  ALIAS_PROPS: 'an alias with an anchor or tag',
  BAD_ALIAS: 'an unresolved or ambiguous alias',
  BAD_COLLECTION_TYPE: 'a tag for another kind of collection',
  BAD_DIRECTIVE: 'a bad directive',
  BAD_DQ_ESCAPE: 'an invalid escape sequence in a double-quoted string',
  BAD_INDENT: 'bad indentation or an unclosed flow collection',
  BAD_PROP_ORDER: 'an anchor or tag in the wrong place',
  BAD_SCALAR_START: 'a plain value starting with a reserved character',
  BLOCK_AS_IMPLICIT_KEY: 'a nested mapping where a key was expected (missing line break or indentation?)',
  BLOCK_IN_FLOW: 'a block collection inside a flow collection',
  DUPLICATE_KEY: 'a mapping with the same key twice',
  IMPOSSIBLE: 'an internal error of the YAML parser',
  KEY_OVER_1024_CHARS: 'an implicit key longer than 1024 characters',
  MISSING_CHAR: 'a missing character (a closing quote or bracket, a comma, a space after a colon)',
  MULTILINE_IMPLICIT_KEY: 'a key spanning several lines',
  MULTIPLE_ANCHORS: 'a node with several anchors',
  MULTIPLE_DOCS: 'more than one YAML document',
  MULTIPLE_TAGS: 'a node with several tags',
  NON_STRING_KEY: 'a key that is not a string',
  TAB_AS_INDENT: 'a tab used as indentation',
  TAG_RESOLVE_FAILED: 'an unknown tag',
  UNEXPECTED_TOKEN: 'unexpected content',
};

/**
 * The in-cluster configuration: the apiserver at KUBERNETES_SERVICE_HOST:_PORT over https, the
 * mounted CA (the system's if it is missing, as client-go does), the mounted token (re-read while
 * running: bound tokens rotate) and namespace.
 */
function inCluster(env: Readonly<Record<string, string | undefined>>, dir: string): Kubeconfig {
  const host = env.KUBERNETES_SERVICE_HOST ?? '';
  const port = env.KUBERNETES_SERVICE_PORT ?? '';
  if (host === '' || port === '')
    throw new KubeconfigError(
      `in-cluster: a service account token is mounted (${join(dir, 'token')}) but KUBERNETES_SERVICE_HOST and KUBERNETES_SERVICE_PORT are not both set`,
    );
  const ca = join(dir, 'ca.crt');
  const namespaceFile = join(dir, 'namespace');
  const namespace = existsSync(namespaceFile) ? readFileSync(namespaceFile, 'utf8').trim() : '';
  return {
    source: 'in-cluster',
    context: 'in-cluster',
    namespace: namespace === '' ? undefined : namespace,
    cluster: {
      name: 'in-cluster',
      server: `https://${isIPv6(host) ? `[${host}]` : host}:${port}`,
      ca: existsSync(ca) ? { file: ca } : undefined,
      insecureSkipTlsVerify: false,
      tlsServerName: undefined,
      execExtension: undefined,
    },
    user: {
      name: 'in-cluster',
      token: undefined,
      tokenFile: join(dir, 'token'),
      basic: undefined,
      clientCertificate: undefined,
      exec: undefined,
      impersonate: undefined,
    },
  };
}
