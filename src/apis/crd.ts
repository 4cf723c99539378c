import type { V1CustomResourceDefinition } from '@kubernetes/client-node';

/** API group and version shared by every Skylift kind. */
export const apiGroup = 'aws.skylift.dev';
export const apiVersion = 'v1alpha1';
/** `kubectl get skylift` lists every kind. */
export const apiCategory = 'skylift';

/**
 * One kind's API: everything `make crds` needs to render its
 * CustomResourceDefinition. Implementations are plain data; no side effects.
 */
export interface KindDefinition {
  /** The CRD, fully rendered (schema with descriptions, CEL rules, printer columns). */
  crd(): V1CustomResourceDefinition;
}

/** File name of a CRD under crds/: `<group>_<plural>.yaml`, as controller-gen names them. Pure. */
export function crdFileName(crd: V1CustomResourceDefinition): string {
  return `${crd.spec.group}_${crd.spec.names.plural}.yaml`;
}
