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
