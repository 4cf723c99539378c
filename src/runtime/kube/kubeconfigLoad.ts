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
 * it). Empty text is null (an empty kubeconfig). Throws KubeconfigError naming `file`.
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
    return yaml.parse(body);
  } catch (err) {
    throw new KubeconfigError(
      `kubeconfig ${file} is neither JSON nor YAML: ${err instanceof Error ? err.message : String(err)}`,
      { cause: err },
    );
  }
}

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
