// TeamPolicy specs for the fuzz test: valid policies selecting the fuzz namespace (by name or by
// label) with any mix of guardrails, and mutations of them at every field a platform team writes.
import fc from 'fast-check';
import { fuzzCases, type FuzzCase } from './mutate.ts';
import { dnsLabel, plainTags } from './values.ts';

const permission = fc.constantFrom('Allowed', 'Forbidden');
const hex = (n: number) => fc.stringMatching(new RegExp(`^[0-9a-f]{${n}}$`));
const account = fc.stringMatching(/^[0-9]{12}$/);

/** A valid TeamPolicy spec selecting `namespace` (and whatever the selector matches). */
export function validTeamPolicySpec(
  namespace: string,
  zoneName: string,
): fc.Arbitrary<Record<string, unknown>> {
  const namespaces = fc.oneof(
    fc.constant({ names: [namespace] }),
    fc.constant({ names: [namespace], selector: { matchLabels: { 'fuzz.skylift.dev/team': 'x' } } }),
    fc.constant({
      selector: {
        matchExpressions: [{ key: 'kubernetes.io/metadata.name', operator: 'In', values: [namespace] }],
      },
    }),
  );
  const dnsRecords = fc.record(
    {
      zones: fc.array(
        fc.oneof(
          fc.constant({ name: zoneName }),
          hex(8).map((h) => ({ id: `Z${h.toUpperCase()}` })),
        ),
        {
          maxLength: 3,
        },
      ),
      names: fc.array(
        fc.oneof(
          fc.constant(zoneName),
          dnsLabel.map((l) => `${l}.${zoneName}`),
        ),
        { maxLength: 3 },
      ),
      delegations: permission,
    },
    { requiredKeys: [] },
  );
  const idsOrTags = (prefix: string) =>
    fc.record(
      {
        ids: fc.array(
          hex(8).map((h) => `${prefix}-${h}`),
          { maxLength: 3 },
        ),
        tags: plainTags,
      },
      { requiredKeys: [] },
    );
  const loadBalancers = fc.record(
    {
      schemes: fc.subarray(['internal', 'internet-facing']),
      subnets: idsOrTags('subnet'),
      securityGroups: idsOrTags('sg'),
      certificates: fc.record({
        arns: fc.array(
          fc.tuple(account, dnsLabel).map(([a, l]) => `arn:aws:acm:us-east-1:${a}:certificate/${l}`),
          { maxLength: 2 },
        ),
      }),
      endpointSliceManagers: fc.array(dnsLabel, { maxLength: 2 }),
    },
    { requiredKeys: [] },
  );
  const databases = fc.record(
    {
      engines: fc.subarray(['postgres', 'mysql', 'mariadb']),
      instanceClasses: fc.array(fc.constantFrom('db.t3.micro', 'db.t4g.*', 'db.m5.large'), { maxLength: 3 }),
      maxAllocatedStorageGiB: fc.integer({ min: 20, max: 65536 }),
      publicAccess: permission,
      restoreFrom: fc.record({ namespaces: fc.array(dnsLabel, { maxLength: 2 }) }),
    },
    { requiredKeys: [] },
  );
  return fc.record(
    {
      namespaces,
      aws: fc.record({ region: fc.constantFrom('us-east-1', 'eu-west-1') }, { requiredKeys: [] }),
      guardrails: fc.record(
        { adoption: permission, dnsRecords, loadBalancers, databases },
        { requiredKeys: [] },
      ),
    },
    { requiredKeys: ['namespaces'] },
  );
}

const paths: readonly (readonly (string | number)[])[] = [
  ['namespaces'],
  ['namespaces', 'names'],
  ['namespaces', 'names', 0],
  ['namespaces', 'selector'],
  ['namespaces', 'selector', 'matchExpressions'],
  ['aws'],
  ['aws', 'region'],
  ['aws', 'roleArn'],
  ['aws', 'externalId'],
  ['guardrails'],
  ['guardrails', 'adoption'],
  ['guardrails', 'dnsRecords'],
  ['guardrails', 'dnsRecords', 'zones'],
  ['guardrails', 'dnsRecords', 'zones', 0],
  ['guardrails', 'dnsRecords', 'names'],
  ['guardrails', 'dnsRecords', 'names', 0],
  ['guardrails', 'loadBalancers', 'schemes'],
  ['guardrails', 'loadBalancers', 'subnets', 'ids'],
  ['guardrails', 'loadBalancers', 'certificates', 'arns', 0],
  ['guardrails', 'databases', 'engines'],
  ['guardrails', 'databases', 'instanceClasses', 0],
  ['guardrails', 'databases', 'maxAllocatedStorageGiB'],
];
const mapPaths: readonly (readonly string[])[] = [
  ['namespaces', 'selector', 'matchLabels'],
  ['guardrails', 'loadBalancers', 'subnets', 'tags'],
];

/** Valid and mutated TeamPolicy specs selecting `namespace`. */
export function teamPolicyCases(namespace: string, zoneName: string): fc.Arbitrary<FuzzCase> {
  return fuzzCases(
    validTeamPolicySpec(namespace, zoneName),
    paths,
    mapPaths,
    fc.constant([{ op: 'set', path: ['guardrails', 'dnsRecords', 'names'], value: ['*', '.', ''] }]),
  );
}
