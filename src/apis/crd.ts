import type { ResourceType } from './meta.ts';
import { readySyncedAgeColumns } from './common.ts';
import { obj, str, type Schema } from './schema.ts';

/** A printer column of `kubectl get`. */
export interface PrinterColumn {
  name: string;
  type: 'string' | 'integer' | 'number' | 'boolean' | 'date';
  jsonPath: string;
  description?: string;
  priority?: number;
}

/**
 * A CustomResourceDefinition as written to crds/ and sent to the apiserver:
 * plain JSON with the wire names (`x-kubernetes-validations`, …), which
 * client-node's model classes would rename.
 */
export interface CrdManifest {
  apiVersion: 'apiextensions.k8s.io/v1';
  kind: 'CustomResourceDefinition';
  metadata: { name: string };
  spec: {
    group: string;
    scope: 'Namespaced' | 'Cluster';
    names: {
      plural: string;
      singular: string;
      kind: string;
      listKind: string;
      shortNames: string[];
      categories: string[];
    };
    versions: {
      name: string;
      served: boolean;
      storage: boolean;
      subresources: { status: Record<string, never> };
      additionalPrinterColumns: PrinterColumn[];
      schema: { openAPIV3Schema: Schema };
    }[];
  };
}

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
  crd(): CrdManifest;
}

/** File name of a CRD under crds/: `<group>_<plural>.yaml`, as controller-gen names them. Pure. */
export function crdFileName(crd: CrdManifest): string {
  return `${crd.spec.group}_${crd.spec.names.plural}.yaml`;
}

/** What differs between Skylift's kinds' CRDs. */
export interface ManagedKindShape {
  readonly type: ResourceType;
  /** Default: the kind in lower case. */
  readonly singular?: string;
  readonly shortName: string;
  /** The root schema's description. */
  readonly description: string;
  /** Kind-specific columns; Ready, Synced and Age follow. */
  readonly columns: PrinterColumn[];
  readonly spec: Schema;
  readonly status: Schema;
}

/** The CRD of a managed kind: namespaced, category skylift, status subresource, the shared columns. Pure. */
export function managedCrd(k: ManagedKindShape): CrdManifest {
  return {
    apiVersion: 'apiextensions.k8s.io/v1',
    kind: 'CustomResourceDefinition',
    metadata: { name: `${k.type.plural}.${k.type.group}` },
    spec: {
      group: k.type.group,
      scope: 'Namespaced',
      names: {
        plural: k.type.plural,
        singular: k.singular ?? k.type.kind.toLowerCase(),
        kind: k.type.kind,
        listKind: `${k.type.kind}List`,
        shortNames: [k.shortName],
        categories: [apiCategory],
      },
      versions: [
        {
          name: k.type.version,
          served: true,
          storage: true,
          subresources: { status: {} },
          additionalPrinterColumns: [...k.columns, ...readySyncedAgeColumns],
          schema: {
            openAPIV3Schema: obj(
              k.description,
              {
                apiVersion: str('APIVersion of this object.'),
                kind: str('Kind of this object.'),
                spec: k.spec,
                status: k.status,
              },
              { required: ['spec'] },
            ),
          },
        },
      ],
    },
  };
}
