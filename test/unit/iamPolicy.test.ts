// deploy/iam/policy.json allows every AWS operation the operator's code calls
// (the list is read from the code's imports, not written down twice), only
// under Skylift's ownership tags where IAM can scope it, and nothing broader.
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';
import { describe, expect, it } from 'vitest';
import { repoRoot } from '../../dev/paths.ts';

interface Statement {
  Sid: string;
  Effect: 'Allow' | 'Deny';
  Action: string | string[];
  Resource: string | string[];
  Condition?: Record<string, Record<string, string | string[]>>;
}
const policy = JSON.parse(readFileSync(join(repoRoot, 'deploy/iam/policy.json'), 'utf8')) as {
  Version: string;
  Statement: Statement[];
};

/** IAM service prefix of each AWS SDK client package the operator uses. */
const iamPrefix: Record<string, string> = {
  '@aws-sdk/client-route-53': 'route53',
  '@aws-sdk/client-acm': 'acm',
  '@aws-sdk/client-elastic-load-balancing-v2': 'elasticloadbalancing',
  '@aws-sdk/client-rds': 'rds',
  '@aws-sdk/client-ec2': 'ec2',
  '@aws-sdk/client-sts': 'sts',
  '@aws-sdk/client-wafv2': 'wafv2',
  '@aws-sdk/client-resource-groups-tagging-api': 'tag',
};
/** The operator's code: what runs in the pod under the IAM role (not the dev tooling or the CLI's helpers). */
const operatorCode = ['src/operator', 'src/runtime', 'src/providers', 'src/kinds', 'src/tenancy'];
/**
 * Called by the operator but granted beside policy.json, not in it (policy.json is also the team
 * roles' permission policy, which must not assume roles): docs/teams.md, "The IAM side", step 1.
 */
const grantedBesidePolicy = new Set(['sts:AssumeRole']);
/**
 * Called by the operator and needing no grant at all: STS answers GetCallerIdentity for any
 * identity, even one that is denied everything
 * (https://docs.aws.amazon.com/STS/latest/APIReference/API_GetCallerIdentity.html).
 */
const needsNoGrant = new Set(['sts:GetCallerIdentity']);

function files(path: string): string[] {
  const abs = join(repoRoot, path);
  if (statSync(abs).isFile()) return [abs];
  return readdirSync(abs).flatMap((n) => files(relative(repoRoot, join(abs, n))));
}

/**
 * `prefix:Operation` for every `new XCommand(` whose import comes from an AWS SDK client: a static
 * `import { XCommand } from '…'`, or `const { XCommand } = await import('…')` where the package is
 * loaded only when first needed.
 */
function operationsInCode(): Map<string, string[]> {
  const found = new Map<string, string[]>();
  for (const file of operatorCode
    .flatMap(files)
    .filter((f) => f.endsWith('.ts') && !f.endsWith('.test.ts'))) {
    const text = readFileSync(file, 'utf8');
    for (const imp of text.matchAll(
      /(?:import\s*(?:type\s*)?\{([^}]*)\}\s*from\s*|const\s*\{([^}]*)\}\s*=\s*await\s+import\(\s*)'(@aws-sdk\/client-[a-z0-9-]+)'/g,
    )) {
      const pkg = imp[3] ?? '';
      const prefix = iamPrefix[pkg];
      const names = (imp[1] ?? imp[2] ?? '').split(',').map(
        (n) =>
          n
            .trim()
            .replace(/^type\s+/, '')
            .split(/\s+as\s+/)
            .pop() ?? '',
      );
      for (const name of names.filter((n) => n.endsWith('Command'))) {
        if (!new RegExp(`new ${name}\\(`).test(text)) continue;
        expect(
          prefix,
          `${pkg} (used in ${relative(repoRoot, file)}) has no IAM prefix in this test`,
        ).toBeDefined();
        const action = `${prefix ?? ''}:${name.replace(/Command$/, '')}`;
        found.set(action, [...(found.get(action) ?? []), relative(repoRoot, file)]);
      }
    }
  }
  return found;
}

const list = (v: string | string[] | undefined): string[] =>
  v === undefined ? [] : Array.isArray(v) ? v : [v];
const globMatch = (pattern: string, value: string): boolean =>
  new RegExp(`^${pattern.replace(/[.+?^${}()|[\]\\]/g, '\\$&').replace(/\*/g, '.*')}$`, 'i').test(value);

/** The request context of a call: condition keys present with their values. */
type Context = Record<string, string>;

/** Whether a statement's conditions hold in the context (the operators this policy uses). */
function conditionsHold(s: Statement, ctx: Context): boolean {
  for (const [op, keys] of Object.entries(s.Condition ?? {})) {
    for (const [key, want] of Object.entries(keys)) {
      const have = ctx[key];
      const values = list(want);
      switch (op) {
        case 'Null':
          if ((have === undefined) !== (values[0] === 'true')) return false;
          break;
        case 'StringEquals':
          if (have === undefined || !values.includes(have)) return false;
          break;
        case 'StringLike':
          if (have === undefined || !values.some((v) => globMatch(v, have))) return false;
          break;
        default:
          throw new Error(`condition operator ${op} is not understood by this test`);
      }
    }
  }
  return true;
}

/**
 * The ARN of the resource an action mainly acts on (what its tag conditions are about); IAM also
 * checks secondary resources (a subnet group, a source snapshot), which this test does not model.
 */
function primaryResource(action: string): string {
  const [service, op = ''] = action.split(':');
  switch (service) {
    case 'rds':
      return /^(DeleteDBSnapshot|DescribeDBSnapshots)$/.test(op)
        ? 'arn:aws:rds:us-east-1:111122223333:snapshot:orders-1'
        : 'arn:aws:rds:us-east-1:111122223333:db:sky-shop-orders-a12659'; // Skylift's name (identity.ts)
    case 'route53':
      return 'arn:aws:route53:::hostedzone/Z0123456789';
    case 'elasticloadbalancing':
      return 'arn:aws:elasticloadbalancing:us-east-1:111122223333:loadbalancer/app/shop/0123456789abcdef';
    case 'acm':
      return 'arn:aws:acm:us-east-1:111122223333:certificate/0123-4567';
    case 'wafv2':
      return 'arn:aws:wafv2:us-east-1:111122223333:regional/webacl/shop/0123-4567';
    case 'ec2':
      return /SecurityGroup(Ingress|Egress)?$/.test(op) && !op.startsWith('Describe')
        ? 'arn:aws:ec2:us-east-1:111122223333:security-group/sg-0123'
        : `arn:aws:ec2:us-east-1:111122223333:subnet/subnet-0123`;
    default:
      return `arn:aws:${service ?? ''}:us-east-1:111122223333:subnet/subnet-0123`;
  }
}

/** Allowed when an Allow statement matches action, resource and conditions and no Deny does. */
function allowed(
  action: string,
  ctx: Context,
  resource = primaryResource(action),
  statements: readonly Statement[] = policy.Statement,
): boolean {
  const matching = statements.filter(
    (s) =>
      list(s.Action).some((a) => globMatch(a, action)) &&
      list(s.Resource).some((r) => globMatch(r, resource)) &&
      conditionsHold(s, ctx),
  );
  return matching.some((s) => s.Effect === 'Allow') && !matching.some((s) => s.Effect === 'Deny');
}

/** What Skylift's own calls carry: ownership request tags on creates, ownership tags on its resources. */
function skyliftContext(action: string): Context {
  const op = action.split(':')[1] ?? '';
  return {
    'aws:RequestTag/skylift.dev/cluster': 'prod',
    'aws:ResourceTag/skylift.dev/cluster': 'prod',
    'elasticloadbalancing:CreateAction': op,
  };
}

describe('deploy/iam/policy.json', () => {
  const operations = operationsInCode();

  it('finds the operations in the code (sanity: all four services, STS for TeamPolicy roles, ACM for certificates allowed by tag, the Tagging API for children found by tag)', () => {
    const services = new Set([...operations.keys()].map((a) => a.split(':')[0]));
    expect([...services].sort()).toEqual([
      'acm',
      'ec2',
      'elasticloadbalancing',
      'rds',
      'route53',
      'sts',
      'tag',
      'wafv2',
    ]);
    expect(operations.size).toBeGreaterThan(30);
    // Read from the imports made on first use (`await import(…)`) too.
    expect(operations.get('ec2:DescribeSubnets')).toContain('src/kinds/myingress/loadBalancer.ts');
    expect(operations.get('sts:GetCallerIdentity')).toEqual(['src/tenancy/accounts.ts']);
    expect(operations.get('tag:GetResources')).toEqual(['src/providers/aws/taggedResources.ts']);
  });

  it('documents the grant of what policy.json leaves out (the operator role assuming team roles)', () => {
    expect([...grantedBesidePolicy].every((a) => operations.has(a))).toBe(true);
    const teams = readFileSync(join(repoRoot, 'docs/teams.md'), 'utf8');
    for (const action of grantedBesidePolicy) expect(teams).toContain(`"Action": "${action}"`);
    for (const action of grantedBesidePolicy) expect(allowed(action, skyliftContext(action))).toBe(false);
  });

  it.each(
    [...operationsInCode().entries()]
      .filter(([action]) => !grantedBesidePolicy.has(action) && !needsNoGrant.has(action))
      .map(([action, where]) => ({ action, where: where.join(', ') })),
  )('allows $action (called in $where) with Skylift’s ownership tags', ({ action }) => {
    expect(allowed(action, skyliftContext(action))).toBe(true);
  });

  it('refuses creates without ownership request tags and changes to resources without ownership tags', () => {
    const mutating = [...operations.keys()].filter((a) =>
      /^(elasticloadbalancing|rds):(Create|Delete|Modify|Register|Deregister|Set|Reboot|Restore|AddTags)/.test(
        a,
      ),
    );
    expect(mutating.length).toBeGreaterThan(15);
    for (const action of mutating) {
      const op = action.split(':')[1] ?? '';
      const untagged: Context = { 'elasticloadbalancing:CreateAction': op };
      expect(allowed(action, untagged), `${action} without tags`).toBe(false);
    }
  });

  it('restores only snapshots carrying Skylift’s ownership tags (its own), not any snapshot in the account', () => {
    const snapshot = 'arn:aws:rds:us-east-1:111122223333:snapshot:team-a-final';
    const grants = (ctx: Context): boolean =>
      policy.Statement.some(
        (st) =>
          st.Effect === 'Allow' &&
          list(st.Action).some((a) => globMatch(a, 'rds:RestoreDBInstanceFromDBSnapshot')) &&
          list(st.Resource).some((r) => globMatch(r, snapshot)) &&
          conditionsHold(st, ctx),
      );
    expect(grants({ 'aws:ResourceTag/skylift.dev/cluster': 'prod' })).toBe(true);
    expect(grants({})).toBe(false);
  });

  it('tags a DB instance only at create (under Skylift’s names) or when it carries Skylift’s tags: no adopting an untagged instance', () => {
    // RDS has no tag-on-create condition key (ELBv2's elasticloadbalancing:CreateAction): a
    // CreateDBInstance with Tags is authorized as rds:AddTagsToResource on the new instance's ARN,
    // which is always sky-… (dbIdentifier); an instance someone else made is named otherwise.
    const requestTags: Context = { 'aws:RequestTag/skylift.dev/cluster': 'prod' };
    const ownTags: Context = { 'aws:ResourceTag/skylift.dev/cluster': 'prod' };
    const created = 'arn:aws:rds:eu-west-1:111122223333:db:sky-payments-ledger-0a1b2c';
    const foreign = 'arn:aws:rds:eu-west-1:111122223333:db:legacy-orders';
    const tag = 'rds:AddTagsToResource';
    expect(allowed('rds:CreateDBInstance', requestTags, created)).toBe(true);
    expect(allowed(tag, requestTags, created), 'tag-on-create of a new sky-… instance').toBe(true);
    expect(allowed(tag, { ...requestTags, ...ownTags }, foreign), 'an instance Skylift owns').toBe(true);
    expect(allowed(tag, ownTags, foreign), 'a later tag on an instance Skylift owns').toBe(true);
    expect(allowed(tag, requestTags, foreign), 'adopting an untagged instance').toBe(false);
    expect(allowed(tag, {}, created)).toBe(false);
    // Every grant of AddTagsToResource on DB instances is conditioned.
    for (const st of policy.Statement.filter(
      (x) => x.Effect === 'Allow' && list(x.Action).some((a) => globMatch(a, tag)),
    )) {
      expect(st.Condition, st.Sid).toBeDefined();
      expect(list(st.Resource), st.Sid).not.toContain('*');
      if (list(st.Resource).some((r) => globMatch(r, foreign)))
        expect(Object.keys(st.Condition?.Null ?? {}), st.Sid).toContain(
          'aws:ResourceTag/skylift.dev/cluster',
        );
    }
  });

  it('documents the grant that lets a platform team hand an untagged DB instance over (docs/teams.md)', () => {
    const extra = JSON.parse(
      readFileSync(join(repoRoot, 'deploy/iam/adopt-untagged-databases.json'), 'utf8'),
    ) as { Statement: Statement[] };
    const both = [...policy.Statement, ...extra.Statement];
    const tag = 'rds:AddTagsToResource';
    const requestTags: Context = { 'aws:RequestTag/skylift.dev/cluster': 'prod' };
    const handedOver: Context = { ...requestTags, 'aws:ResourceTag/skylift-handover': 'payments' };
    const listed = 'arn:aws:rds:eu-west-1:111122223333:db:legacy-orders';
    const other = 'arn:aws:rds:eu-west-1:111122223333:db:billing-main';
    expect(allowed(tag, requestTags, listed, both), 'by ARN').toBe(true);
    expect(allowed(tag, handedOver, other, both), 'by the hand-over tag').toBe(true);
    expect(allowed(tag, { ...requestTags, 'aws:ResourceTag/skylift-handover': 'search' }, other, both)).toBe(
      false,
    );
    expect(allowed(tag, requestTags, other, both), 'neither listed nor handed over').toBe(false);
    for (const st of extra.Statement) expect(list(st.Action), st.Sid).toEqual([tag]);
  });

  it('imports ACM certificates only with ownership request tags, and re-imports or deletes only certificates carrying Skylift’s tags', () => {
    // ACM has no tag-on-create condition key: a new import carries its tags in the same call
    // (aws:RequestTag); a re-import takes no tags, so it is allowed on a certificate that carries
    // Skylift's (aws:ResourceTag), as is its deletion. A retag sends the cluster tag with the others.
    const certificate = 'arn:aws:acm:eu-west-1:111122223333:certificate/4b2f-0001';
    const requestTags: Context = { 'aws:RequestTag/skylift.dev/cluster': 'prod' };
    const ownTags: Context = { 'aws:ResourceTag/skylift.dev/cluster': 'prod' };
    expect(allowed('acm:ImportCertificate', requestTags, certificate), 'a new import with its tags').toBe(
      true,
    );
    expect(allowed('acm:ImportCertificate', {}, certificate), 'a new import without tags').toBe(false);
    expect(allowed('acm:ImportCertificate', ownTags, certificate), 're-import of Skylift’s').toBe(true);
    expect(allowed('acm:DeleteCertificate', ownTags, certificate)).toBe(true);
    expect(allowed('acm:DeleteCertificate', {}, certificate), 'a certificate Skylift does not own').toBe(
      false,
    );
    expect(
      allowed('acm:DeleteCertificate', requestTags, certificate),
      'tags in the request do not make it Skylift’s',
    ).toBe(false);
    expect(allowed('acm:AddTagsToCertificate', requestTags, certificate)).toBe(true);
    expect(allowed('acm:AddTagsToCertificate', {}, certificate), 'tags without the cluster tag').toBe(false);
  });

  it('creates security groups only with ownership request tags, and changes or deletes only groups carrying Skylift’s tags', () => {
    const group = 'arn:aws:ec2:us-east-1:111122223333:security-group/sg-0a1';
    expect(allowed('ec2:CreateSecurityGroup', { 'aws:RequestTag/skylift.dev/cluster': 'prod' }, group)).toBe(
      true,
    );
    expect(allowed('ec2:CreateSecurityGroup', {}, group), 'an untagged group').toBe(false);
    for (const op of [
      'AuthorizeSecurityGroupIngress',
      'AuthorizeSecurityGroupEgress',
      'RevokeSecurityGroupIngress',
      'RevokeSecurityGroupEgress',
      'DeleteSecurityGroup',
    ]) {
      expect(allowed(`ec2:${op}`, { 'aws:ResourceTag/skylift.dev/cluster': 'prod' }, group), op).toBe(true);
      expect(allowed(`ec2:${op}`, {}, group), `${op} on a group Skylift does not own`).toBe(false);
    }
    expect(
      allowed(
        'ec2:CreateTags',
        { 'ec2:CreateAction': 'CreateSecurityGroup', 'aws:RequestTag/skylift.dev/cluster': 'p' },
        group,
      ),
    ).toBe(true);
    expect(
      allowed('ec2:CreateTags', { 'aws:RequestTag/skylift.dev/cluster': 'p' }, group),
      'tagging later',
    ).toBe(false);
  });

  it('lets WAF associate a web ACL only with load balancers carrying Skylift’s tags (elasticloadbalancing:SetWebACL)', () => {
    const setWebAcl = 'elasticloadbalancing:SetWebACL';
    expect(allowed(setWebAcl, { 'aws:ResourceTag/skylift.dev/cluster': 'prod' })).toBe(true);
    expect(allowed(setWebAcl, {}), 'a load balancer Skylift does not own').toBe(false);
  });

  it('grants nothing the code does not call, and no service-wide wildcards', () => {
    const extra = new Set([
      // Needed by AWS itself on the operator's behalf, not called by the code:
      'elasticloadbalancing:AddTags', // tag-on-create of load balancers, target groups, listeners, rules
      'secretsmanager:CreateSecret', // ManagedDB password.managedByAWS (RDS creates the secret)
      'secretsmanager:TagResource',
      'kms:DescribeKey',
      'iam:CreateServiceLinkedRole', // first load balancer / DB instance in an account
      // wafv2:AssociateWebACL and DisassociateWebACL of an ALB are authorized as this too, on the load
      // balancer (https://docs.aws.amazon.com/waf/latest/developerguide/security-iam-awsmanpol.html):
      // granted on Skylift's own load balancers only.
      'elasticloadbalancing:SetWebACL',
      // Tag-on-create of the managed security group (CreateSecurityGroup's TagSpecifications).
      'ec2:CreateTags',
    ]);
    for (const s of policy.Statement) {
      for (const action of list(s.Action)) {
        expect(action, s.Sid).not.toMatch(/\*/);
        expect(operations.has(action) || extra.has(action), `${s.Sid} grants ${action}`).toBe(true);
      }
    }
    expect(policy.Version).toBe('2012-10-17');
  });

  it('has a trust policy example for IRSA', () => {
    const trust = JSON.parse(readFileSync(join(repoRoot, 'deploy/iam/trust-policy.json'), 'utf8')) as {
      Statement: { Action: string; Condition: { StringEquals: Record<string, string> } }[];
    };
    const [st] = trust.Statement;
    expect(st?.Action).toBe('sts:AssumeRoleWithWebIdentity');
    expect(Object.values(st?.Condition.StringEquals ?? {})).toEqual(
      expect.arrayContaining(['system:serviceaccount:skylift-system:skylift', 'sts.amazonaws.com']),
    );
  });
});

// Issue 27, item 9: IAM as a second line — a team role may restore only its own namespaces' snapshots.
describe('deploy/iam/team-restore-own-snapshots.json', () => {
  const guard = JSON.parse(
    readFileSync(join(repoRoot, 'deploy/iam/team-restore-own-snapshots.json'), 'utf8'),
  ) as { Statement: Statement[] };

  /** Whether the example denies a restore of a snapshot whose owner tag is `owner` (undefined: untagged). */
  const denies = (owner: string | undefined): boolean =>
    guard.Statement.some((s) => {
      if (s.Effect !== 'Deny' || ![s.Action].flat().includes('rds:RestoreDBInstanceFromDBSnapshot'))
        return false;
      const patterns = [s.Condition?.StringNotLike?.['aws:ResourceTag/skylift.dev/owner'] ?? []].flat();
      const like = (p: string, v: string): boolean =>
        new RegExp(
          `^${p
            .replace(/[.+^${}()|[\]\\]/g, '\\$&')
            .replace(/\*/g, '.*')
            .replace(/\?/g, '.')}$`,
        ).test(v);
      // StringNotLike on a missing key is true: an untagged snapshot is denied too.
      return owner === undefined || !patterns.some((p) => like(p, owner));
    });

  it("denies restoring another namespace's, another team's or an untagged snapshot, and allows the team's own", () => {
    expect(denies('payments/orders')).toBe(false);
    expect(denies('payments-staging/orders')).toBe(false);
    expect(denies('search/orders')).toBe(true);
    expect(denies('paymentsx/orders')).toBe(true);
    expect(denies(undefined)).toBe(true);
  });
});
