// What the parts of the ManagedDB adapter are given: the clients they are built with.
import type { RDSClient } from '@aws-sdk/client-rds';
import type { KubeClient } from '../../runtime/kube/client.ts';

/** What the ManagedDB adapter needs. */
export interface ManagedDBAdapterDeps {
  readonly rds: RDSClient;
  /** Reads connection Secrets (never writes them: the engine does). */
  readonly kube: KubeClient;
  /** First interval between looks at a busy instance (longer waits are polled less often). */
  readonly pollMs: number;
  /**
   * Other namespaces whose Skylift snapshots an object of `namespace` may restore (its TeamPolicy's
   * guardrails.databases.restoreFrom.namespaces); absent: none, only its own.
   */
  readonly restoreNamespaces?: (namespace: string) => readonly string[];
}
