import type { KindDefinition } from './crd.ts';
import { dnsRecordKind } from './dnsrecord.ts';
import { managedDbKind } from './manageddb.ts';
import { myIngressKind } from './myingress.ts';

/**
 * Every kind Skylift serves. `make crds` renders each into crds/.
 */
export const allKinds: readonly KindDefinition[] = [dnsRecordKind, myIngressKind, managedDbKind];
