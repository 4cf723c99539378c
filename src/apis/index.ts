import type { KindDefinition } from './crd.ts';
import { dnsRecordKind } from './dnsrecord.ts';
import { myIngressKind } from './myingress.ts';

/**
 * Every kind Skylift serves. `make crds` renders each into crds/; ManagedDB
 * joins when its controller is written.
 */
export const allKinds: readonly KindDefinition[] = [dnsRecordKind, myIngressKind];
