// Each kind's status interface (what its adapter may report, typed end to end) and the status
// schema its CRD serves list the same fields with the same types. The constants below are checked
// against the interfaces by the compiler (ShapeOf: every field, its type); the test checks them
// against the schemas.
import { describe, expect, it } from 'vitest';
import type { KindStatusOf } from '../../src/apis/managed.ts';
import { managedStatusProperties } from '../../src/apis/common.ts';
import type { CrdManifest } from '../../src/apis/crd.ts';
import type { Schema } from '../../src/apis/schema.ts';
import { myIngressCrd, type MyIngress } from '../../src/kinds/myingress/api.ts';
import { dnsRecordCrd, type DNSRecord } from '../../src/kinds/dnsrecord/api.ts';
import { managedDbCrd, type ManagedDB } from '../../src/kinds/manageddb/api.ts';
import { shapeDifferences, type ShapeOf } from '../support/statusShape.ts';
import { queueCrd, type Queue } from '../support/queueKind/api.ts';

const myIngressStatus: ShapeOf<KindStatusOf<MyIngress>> = {
  arn: 'string',
  dnsName: 'string',
  canonicalHostedZoneId: 'string',
  state: 'string',
  listeners: [{ port: 'integer', arn: 'string' }],
  rules: [{ listenerPort: 'integer', priority: 'integer', arn: 'string' }],
  securityGroups: ['string'],
  managedSecurityGroup: 'string',
  targetGroups: [{ service: 'string', port: 'integer', arn: 'string', registeredTargets: 'integer' }],
};

const dnsRecordStatus: ShapeOf<KindStatusOf<DNSRecord>> = {
  fqdn: 'string',
  zoneId: 'string',
  changeId: 'string',
  changeStatus: 'string',
  aliasDNSName: 'string',
};

const managedDbStatus: ShapeOf<KindStatusOf<ManagedDB>> = {
  arn: 'string',
  identifier: 'string',
  dbInstanceStatus: 'string',
  engineVersion: 'string',
  acceptedEngineVersion: 'string',
  endpoint: { address: 'string', port: 'integer' },
  masterUserSecretArn: 'string',
  pendingModifications: ['string'],
  lastSnapshot: { name: 'string', state: 'string', time: 'string' },
  nextSnapshot: 'string',
  lastRequest: { id: 'string', result: 'string' },
};

const queueStatus: ShapeOf<KindStatusOf<Queue>> = { url: 'string', arn: 'string' };

function statusSchema(crd: CrdManifest): Schema {
  const s = crd.spec.versions[0]?.schema.openAPIV3Schema.properties?.status;
  if (s === undefined) throw new Error(`${crd.metadata.name} has no status schema`);
  return s;
}

const common = Object.keys(managedStatusProperties);

describe('status types agree with the CRDs’ status schemas', () => {
  it.each([
    ['MyIngress', myIngressCrd(), myIngressStatus],
    ['DNSRecord', dnsRecordCrd(), dnsRecordStatus],
    ['ManagedDB', managedDbCrd(), managedDbStatus],
    ['Queue (the one-folder kind of the tests)', queueCrd(), queueStatus],
  ] as const)('%s', (_kind, crd, shape) => {
    expect(shapeDifferences(statusSchema(crd), shape, common)).toEqual([]);
  });

  it('reports a field only one side has, and a type that differs', () => {
    const schema: Schema = {
      type: 'object',
      description: 's',
      properties: {
        a: { type: 'string', description: 'a' },
        b: { type: 'integer', description: 'b' },
        l: { type: 'array', description: 'l', items: { type: 'object', description: 'i', properties: {} } },
      },
    };
    expect(shapeDifferences(schema, { a: 'string', c: 'string', l: [{ x: 'string' }] })).toEqual([
      'status.b: in the schema, not the type',
      'status.c: in the type, not the schema',
      'status.l[].x: in the type, not the schema',
    ]);
    expect(shapeDifferences(schema, { a: 'integer', b: 'integer', l: ['string'] })).toEqual([
      'status.a: string in the schema, integer in the type',
      'status.l[]: object in the schema, string in the type',
    ]);
  });
});
