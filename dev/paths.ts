import { readFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

/** The repository root (this file lives in dev/). */
export const repoRoot = resolve(dirname(fileURLToPath(import.meta.url)), '..');

/** Pinned tool versions, read from hack/versions.env (the single source shared with the shell scripts). */
export interface PinnedVersions {
  readonly KUBE_VERSION: string;
  readonly ETCD_VERSION: string;
  readonly NODE_VERSION: string;
  readonly MOTO_VERSION: string;
  readonly HELM_VERSION: string;
  /** Argo CD's application controller and repo server, for the Argo CD end-to-end test. */
  readonly ARGOCD_VERSION: string;
  /** The Gateway API's CRDs and conformance suite (sigs.k8s.io/gateway-api), one version. */
  readonly GATEWAY_API_VERSION: string;
}

/** Parses `KEY=VALUE` lines, ignoring blanks and `#` comments. Pure. */
export function parseEnvFile(text: string): Record<string, string> {
  const out: Record<string, string> = {};
  for (const raw of text.split('\n')) {
    const line = raw.trim();
    if (line === '' || line.startsWith('#')) continue;
    const eq = line.indexOf('=');
    if (eq <= 0) throw new Error(`malformed line in env file: ${JSON.stringify(raw)}`);
    out[line.slice(0, eq)] = line.slice(eq + 1);
  }
  return out;
}

/** Reads hack/versions.env; throws when a version is missing. */
export function pinnedVersions(root: string = repoRoot): PinnedVersions {
  const env = parseEnvFile(readFileSync(join(root, 'hack', 'versions.env'), 'utf8'));
  const get = (key: keyof PinnedVersions): string => {
    const v = env[key];
    if (v === undefined || v === '') throw new Error(`hack/versions.env does not set ${key}`);
    return v;
  };
  return {
    KUBE_VERSION: get('KUBE_VERSION'),
    ETCD_VERSION: get('ETCD_VERSION'),
    NODE_VERSION: get('NODE_VERSION'),
    MOTO_VERSION: get('MOTO_VERSION'),
    HELM_VERSION: get('HELM_VERSION'),
    ARGOCD_VERSION: get('ARGOCD_VERSION'),
    GATEWAY_API_VERSION: get('GATEWAY_API_VERSION'),
  };
}

/** Where installed tools are cached, outside the clone; mirrors hack/lib.sh. */
export interface ToolPaths {
  readonly cacheDir: string;
  readonly kubeBinDir: string;
  readonly venvDir: string;
  /** The Helm CLI built by hack/install-helm.sh. */
  readonly helmBin: string;
  /**
   * What hack/install-argocd.sh installs: the `argocd` multi-call binary (and its names
   * argocd-application-controller, argocd-repo-server), `redis-server`, and `crds/`.
   */
  readonly argocdDir: string;
  /**
   * What hack/install-gateway-api.sh installs: `crds/` (every file of the module's standard
   * channel, config/crd/standard/) and `conformance.test` (the conformance suite, `go test -c`).
   */
  readonly gatewayApiDir: string;
}

/** Resolves tool locations from the environment exactly as hack/lib.sh does. Pure given `env`. */
export function toolPaths(
  env: NodeJS.ProcessEnv = process.env,
  versions: PinnedVersions = pinnedVersions(),
): ToolPaths {
  const cacheDir = env.SKYLIFT_CACHE_DIR ?? join(env.XDG_CACHE_HOME ?? join(homedir(), '.cache'), 'skylift');
  return {
    cacheDir,
    kubeBinDir: env.SKYLIFT_KUBE_BIN_DIR ?? join(cacheDir, 'kube', versions.KUBE_VERSION),
    venvDir: env.SKYLIFT_VENV_DIR ?? join(cacheDir, 'venv', `moto-${versions.MOTO_VERSION}`),
    helmBin: join(cacheDir, 'helm', versions.HELM_VERSION, 'helm'),
    argocdDir: join(cacheDir, 'argocd', versions.ARGOCD_VERSION),
    gatewayApiDir: join(cacheDir, 'gateway-api', versions.GATEWAY_API_VERSION),
  };
}
