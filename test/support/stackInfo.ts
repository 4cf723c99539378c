import type { NodeSlotAddresses } from '../../dev/nodeSlot.ts';

/** Coordinates of the local stack started by globalSetup, as test files see them. */
export interface StackInfo {
  readonly dir: string;
  readonly server: string;
  readonly caPem: string;
  readonly adminToken: string;
  readonly operatorToken: string;
  readonly operatorUser: string;
  readonly operatorGroup: string;
  readonly adminKubeconfig: string;
  readonly operatorKubeconfig: string;
  /** moto's endpoint (not the fault proxy's). */
  readonly awsEndpoint: string;
  readonly logDir: string;
}

declare module 'vitest' {
  export interface ProvidedContext {
    stack: StackInfo;
  }
}

/** The node of the node cluster started by test/support/nodeGlobalSetup.ts (node tests only). */
export interface NodeInfo extends NodeSlotAddresses {
  readonly nodeName: string;
  /** The node's containerd (images are imported into its k8s.io namespace). */
  readonly containerdSocket: string;
  /** The sample app image, imported into the node. */
  readonly helloImage: string;
  /** The operator image (`make image`), imported into the node. */
  readonly operatorImage: string;
}

declare module 'vitest' {
  export interface ProvidedContext {
    node: NodeInfo;
  }
}
