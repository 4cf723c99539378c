/** What a kubeconfig for one identity on one cluster needs. */
export interface KubeconfigSpec {
  readonly clusterName: string;
  readonly server: string;
  readonly caPem: string;
  readonly user: string;
  readonly token: string;
  /** Context name; defaults to `${clusterName}-${user}`. */
  readonly context?: string;
}

/**
 * Renders a kubeconfig. JSON is valid YAML, so kubectl and client-node read
 * it as is. Several specs give one file with several contexts; the first is
 * current. Pure.
 */
export function renderKubeconfig(specs: readonly KubeconfigSpec[]): string {
  const first = specs[0];
  if (first === undefined) throw new Error('renderKubeconfig: no identities');
  const contextName = (s: KubeconfigSpec): string => s.context ?? `${s.clusterName}-${s.user}`;
  const clusters = new Map<string, KubeconfigSpec>();
  for (const s of specs) clusters.set(s.clusterName, s);
  return (
    JSON.stringify(
      {
        apiVersion: 'v1',
        kind: 'Config',
        clusters: [...clusters.values()].map((s) => ({
          name: s.clusterName,
          cluster: {
            server: s.server,
            'certificate-authority-data': Buffer.from(s.caPem).toString('base64'),
          },
        })),
        users: specs.map((s) => ({ name: s.user, user: { token: s.token } })),
        contexts: specs.map((s) => ({
          name: contextName(s),
          context: { cluster: s.clusterName, user: s.user, namespace: 'default' },
        })),
        'current-context': contextName(first),
      },
      null,
      2,
    ) + '\n'
  );
}
