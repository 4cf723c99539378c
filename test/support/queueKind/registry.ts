// The product's registry with the Queue kind added: what src/kinds/registry.ts would list once the
// kind's line is added to it (docs/architecture.md, "Adding a kind"). Tests generate the CRDs,
// the chart's kind list and RBAC, its admission policies and the TeamPolicy CRD from it, and run
// the operator with it.
import type { KindModule } from '../../../src/kinds/module.ts';
import { kinds } from '../../../src/kinds/registry.ts';
import { queueKind } from './index.ts';

/** Skylift's kinds, then Queue. */
export const kindsWithQueue: readonly KindModule[] = [...kinds, queueKind];
