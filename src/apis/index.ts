import type { KindDefinition } from './crd.ts';
import { dnsRecordKind } from './dnsrecord.ts';

/**
 * Every kind Skylift serves. `make crds` renders each into crds/; MyIngress
 * and ManagedDB join as their controllers are written.
 */
export const allKinds: readonly KindDefinition[] = [dnsRecordKind];
