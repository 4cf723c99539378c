import type { KindDefinition } from './crd.ts';

/**
 * Every kind Skylift serves. `make crds` renders each into crds/; the kinds
 * themselves (MyIngress, ManagedDB, DNSRecord) are added by their own
 * controllers' work.
 */
export const allKinds: readonly KindDefinition[] = [];
