// The install paths as a platform team uses them: the Helm chart and the
// kustomize base render, meet the "restricted" Pod Security Standard and
// least-privilege RBAC, and what they render is accepted by the real
// kube-apiserver (kubectl apply --dry-run=server).
import { execFile } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { beforeAll, describe, expect, it } from 'vitest';
import { parse, parseAllDocuments } from 'yaml';
import { chartDir, helm, helmTemplate } from '../../tools/chart.ts';
import { parseBudget } from '../../src/operator/options.ts';
import { chartKindGroups } from '../../tools/generatedFiles.ts';
import { admissionPolicies, allCrds, kinds } from '../../src/kinds/registry.ts';
import { chartHeapLimitMiB } from '../../tools/nodeFlags.ts';
import { pinnedVersions, repoRoot } from '../../dev/paths.ts';
import { gatewayApiCrds } from '../../dev/installCrds.ts';
import { kubeClient, newNamespace } from '../support/kube.ts';
import { kubectl } from '../../dev/kubectl.ts';
import { stackInfo } from '../support/stack.ts';

interface Manifest {
  apiVersion: string;
  kind: string;
  metadata: {
    name: string;
    namespace?: string;
    labels?: Record<string, string>;
    annotations?: Record<string, string>;
  };
  [key: string]: unknown;
}
interface PolicyRule {
  apiGroups: string[];
  resources: string[];
  verbs: string[];
  resourceNames?: string[];
}
interface PodSpec {
  serviceAccountName: string;
  securityContext: Record<string, unknown>;
  topologySpreadConstraints?: { topologyKey: string }[];
  containers: {
    args: string[];
    securityContext: Record<string, unknown>;
    resources: { requests?: Record<string, string>; limits?: Record<string, string> };
    env?: { name: string; value?: string }[];
    livenessProbe?: unknown;
    readinessProbe?: unknown;
  }[];
}

function docs(text: string): Manifest[] {
  return parseAllDocuments(text)
    .map((d) => d.toJS() as Manifest | null)
    .filter((d): d is Manifest => d !== null);
}
function one(all: Manifest[], kind: string, name?: string): Manifest {
  const found = all.filter((m) => m.kind === kind && (name === undefined || m.metadata.name === name));
  expect(found, `${kind} ${name ?? ''}`).toHaveLength(1);
  return found[0] as Manifest;
}
const podSpec = (deployment: Manifest): PodSpec =>
  (deployment as unknown as { spec: { template: { spec: PodSpec } } }).spec.template.spec;
const rulesOf = (role: Manifest): PolicyRule[] => (role as unknown as { rules: PolicyRule[] }).rules;
/** Every kind's resource (plural), from the registry. */
const plurals = kinds.map((k) => k.type.plural);
/** The name of each kind's admission policy and binding (the kinds with guardrails at admission). */
const policyNames = admissionPolicies().map((p) => `skylift-${p.resource}`);

/** Applies manifests with `kubectl apply --dry-run=server`; returns kubectl's result. */
async function serverDryRun(text: string) {
  return kubectl(
    stackInfo().adminKubeconfig,
    ['apply', '--server-side', '--field-manager=skylift-test', '--dry-run=server', '-f', '-'],
    text,
  );
}

describe('Helm chart', () => {
  let defaults: Manifest[];
  beforeAll(async () => {
    defaults = docs(await helmTemplate());
  });

  it('passes helm lint --strict', async () => {
    const out = await helm([
      'lint',
      '--strict',
      chartDir,
      '--set',
      'serviceAccount.roleArn=arn:aws:iam::1:role/x',
    ]);
    expect(out).toContain('0 chart(s) failed');
  });

  it('runs two replicas with leader election under the "restricted" Pod Security Standard', () => {
    const deployment = one(defaults, 'Deployment');
    expect((deployment as unknown as { spec: { replicas: number } }).spec.replicas).toBe(2);
    const pod = podSpec(deployment);
    expect(pod.securityContext).toMatchObject({
      runAsNonRoot: true,
      seccompProfile: { type: 'RuntimeDefault' },
    });
    const [container] = pod.containers;
    expect(container?.securityContext).toMatchObject({
      allowPrivilegeEscalation: false,
      readOnlyRootFilesystem: true,
      capabilities: { drop: ['ALL'] },
    });
    expect(container?.args).toEqual(
      expect.arrayContaining(['run', '--leader-elect=true', '--region=us-east-1']),
    );
    expect(container?.resources.requests).toBeDefined();
    expect(container?.resources.limits?.memory).toBeDefined();
    // The heap limit make bench measures with (tools/nodeFlags.ts), under the memory limit.
    expect(container?.env).toContainEqual({
      name: 'NODE_OPTIONS',
      value: `--max-old-space-size=${chartHeapLimitMiB}`,
    });
    expect(parseInt(container?.resources.limits?.memory ?? '0', 10)).toBeGreaterThan(chartHeapLimitMiB + 100);
    expect(container?.livenessProbe).toBeDefined();
    expect(container?.readinessProbe).toBeDefined();
    expect(pod.topologySpreadConstraints?.map((t) => t.topologyKey)).toEqual([
      'kubernetes.io/hostname',
      'topology.kubernetes.io/zone',
    ]);
    expect(one(defaults, 'PodDisruptionBudget')).toBeDefined();
    expect(one(defaults, 'Service', 'skylift-metrics')).toBeDefined();
    // Nothing from the Prometheus Operator unless asked for.
    expect(defaults.filter((m) => m.apiVersion.startsWith('monitoring.coreos.com'))).toEqual([]);
  });

  it('passes the per-account AWS request budget when set, and parses as the operator reads it', async () => {
    const defaults = docs(await helmTemplate({ values: {} }));
    expect(podSpec(one(defaults, 'Deployment')).containers[0]?.args.join(' ')).not.toContain(
      '--aws-requests-per-second',
    );
    const all = docs(await helmTemplate({ values: { awsRequestsPerSecond: { route53: 5, rds: 12 } } }));
    const args = podSpec(one(all, 'Deployment')).containers[0]?.args ?? [];
    const arg = args.find((a) => a.startsWith('--aws-requests-per-second='));
    expect(arg).toBe('--aws-requests-per-second=rds=12,route53=5');
    expect(parseBudget(arg?.split('=').slice(1).join('=') ?? '')).toEqual({ rds: 12, route53: 5 });
  });

  it('puts the IRSA role on the ServiceAccount the pods run as', async () => {
    const role = 'arn:aws:iam::111122223333:role/skylift-operator';
    const all = docs(await helmTemplate({ values: { serviceAccount: { roleArn: role } } }));
    const sa = one(all, 'ServiceAccount');
    expect(sa.metadata.annotations?.['eks.amazonaws.com/role-arn']).toBe(role);
    expect(podSpec(one(all, 'Deployment')).serviceAccountName).toBe(sa.metadata.name);
  });

  it('mounts a projected STS token and sets the web-identity variables itself when asked (self-managed IRSA)', async () => {
    const role = 'arn:aws:iam::111122223333:role/skylift-operator';
    const all = docs(
      await helmTemplate({
        values: {
          serviceAccount: { roleArn: role, webIdentityToken: { enabled: true, expirationSeconds: 3600 } },
        },
      }),
    );
    const pod = podSpec(one(all, 'Deployment')) as PodSpec & {
      volumes: {
        name: string;
        projected?: { sources: { serviceAccountToken?: Record<string, unknown> }[] };
      }[];
      containers: { volumeMounts: { name: string; mountPath: string; readOnly?: boolean }[] }[];
    };
    const env = pod.containers[0]?.env ?? [];
    expect(env).toContainEqual({ name: 'AWS_ROLE_ARN', value: role });
    expect(env).toContainEqual({
      name: 'AWS_WEB_IDENTITY_TOKEN_FILE',
      value: '/var/run/secrets/eks.amazonaws.com/serviceaccount/token',
    });
    expect(pod.volumes.find((v) => v.name === 'aws-iam-token')?.projected?.sources).toEqual([
      { serviceAccountToken: { audience: 'sts.amazonaws.com', expirationSeconds: 3600, path: 'token' } },
    ]);
    expect(pod.containers[0]?.volumeMounts).toContainEqual({
      name: 'aws-iam-token',
      mountPath: '/var/run/secrets/eks.amazonaws.com/serviceaccount',
      readOnly: true,
    });
    // Off by default: EKS's webhook does this on EKS.
    const plain = podSpec(one(defaults, 'Deployment'));
    expect((plain.containers[0]?.env ?? []).map((e) => e.name)).not.toContain('AWS_WEB_IDENTITY_TOKEN_FILE');
    // Without a role there is nothing to exchange the token for: refused at render time, with the fix.
    await expect(
      helmTemplate({ values: { serviceAccount: { webIdentityToken: { enabled: true } } } }),
    ).rejects.toThrow(/webIdentityToken.enabled needs serviceAccount.roleArn/);
  });

  it('grants least privilege: no wildcards, Secrets only get/create/patch, the Lease and the teams marker only in its namespace', () => {
    const clusterRole = defaults.find((m) => m.kind === 'ClusterRole' && m.metadata.name === 'skylift');
    if (clusterRole === undefined) throw new Error("no ClusterRole 'skylift' (the operator's)");
    const rules = rulesOf(clusterRole);
    const namespaced = defaults.filter((m) => m.kind === 'Role');
    expect(namespaced.map((m) => m.metadata.name).sort()).toEqual([
      'skylift-leader-election',
      'skylift-teams',
    ]);
    for (const r of [...rules, ...namespaced.flatMap(rulesOf)]) {
      expect([...r.verbs, ...r.resources, ...r.apiGroups]).not.toContain('*');
    }
    const secretVerbs = rules.filter((r) => r.resources.includes('secrets')).flatMap((r) => r.verbs);
    expect(secretVerbs.sort()).toEqual(['create', 'get', 'patch']);
    expect(rules.flatMap((r) => r.resources)).not.toContain('leases');
    expect(rules.flatMap((r) => r.verbs)).not.toContain('delete');
    // Every kind of the registry (files/kinds.yaml), and its status: nothing more on them.
    for (const g of chartKindGroups()) {
      expect(rules).toContainEqual({
        apiGroups: [g.apiGroup],
        resources: g.resources,
        verbs: ['get', 'list', 'watch', 'patch'],
      });
      expect(rules).toContainEqual({
        apiGroups: [g.apiGroup],
        resources: g.resources.map((r) => `${r}/status`),
        verbs: ['get', 'patch'],
      });
    }
    expect(chartKindGroups().flatMap((g) => g.resources)).toEqual(plurals);
    // The teams marker (docs/teams.md): create it, and read only it; never update or delete it.
    const teamsRole = one(defaults, 'Role', 'skylift-teams');
    expect(teamsRole.metadata.namespace).toBe('skylift-system');
    expect(rulesOf(teamsRole)).toEqual([
      { apiGroups: [''], resources: ['configmaps'], verbs: ['create'] },
      { apiGroups: [''], resources: ['configmaps'], resourceNames: ['skylift-leader-teams'], verbs: ['get'] },
    ]);
    expect(one(defaults, 'RoleBinding', 'skylift-teams').metadata.namespace).toBe('skylift-system');
    const leaseRole = one(defaults, 'Role', 'skylift-leader-election');
    expect(leaseRole.metadata.namespace).toBe('skylift-system');
    expect(rulesOf(leaseRole).flatMap((r) => r.resources)).toEqual(['leases', 'leases']);
    // Everything but create only on the operator's own Lease (a watch of it by name, too).
    expect(rulesOf(leaseRole)).toEqual([
      { apiGroups: ['coordination.k8s.io'], resources: ['leases'], verbs: ['create'] },
      {
        apiGroups: ['coordination.k8s.io'],
        resources: ['leases'],
        resourceNames: ['skylift-leader'],
        verbs: ['get', 'update', 'list', 'watch'],
      },
    ]);
  });

  it('uses namespaced Roles, not a ClusterRole, when watchNamespaces is set', async () => {
    const clusterPlurals = chartKindGroups().flatMap((g) => g.clusterResources ?? []);
    expect(clusterPlurals).toEqual(['myingressgroups']);
    const all = docs(await helmTemplate({ values: { watchNamespaces: ['team-a', 'team-b'] } }));
    // The operator's only cluster-wide rights: reading TeamPolicies and namespaces (which policy
    // serves a namespace), writing the policies' status and their Events, the cluster-scoped
    // kinds (MyIngressGroup), which no Role can grant; reading GatewayClasses and writing their
    // status (both cluster-scoped). The other ClusterRoles are the ones for users.
    expect(
      all
        .filter((m) => m.kind === 'ClusterRoleBinding')
        .map((m) => m.metadata.name)
        .sort(),
    ).toEqual(['skylift-gateway-api', 'skylift-tenancy']);
    expect(
      all
        .filter((m) => m.kind === 'ClusterRole')
        .map((m) => m.metadata.name)
        .sort(),
    ).toEqual(['skylift-edit', 'skylift-gateway-api', 'skylift-tenancy', 'skylift-view']);
    // The Gateway API's objects read, the status of Skylift's written, and each Gateway's
    // MyIngressGroup made and removed, and its route hostnames' DNSRecords: nothing else (no write
    // to a Gateway's or route's spec).
    expect(rulesOf(one(all, 'ClusterRole', 'skylift-gateway-api'))).toEqual([
      {
        apiGroups: ['gateway.networking.k8s.io'],
        resources: ['gatewayclasses', 'gateways', 'httproutes', 'grpcroutes', 'referencegrants'],
        verbs: ['get', 'list', 'watch'],
      },
      {
        apiGroups: ['gateway.networking.k8s.io'],
        resources: ['gateways'],
        verbs: ['patch'],
      },
      {
        apiGroups: ['gateway.networking.k8s.io'],
        resources: ['gatewayclasses/status', 'gateways/status', 'httproutes/status', 'grpcroutes/status'],
        verbs: ['patch', 'update'],
      },
      {
        apiGroups: ['aws.skylift.dev'],
        resources: ['myingressgroups'],
        verbs: ['create', 'delete'],
      },
      // The DNSRecords of a Gateway's route hostnames (docs/gateway.md, "DNS"), server-side applied.
      {
        apiGroups: ['aws.skylift.dev'],
        resources: ['dnsrecords'],
        verbs: ['create', 'patch', 'delete'],
      },
    ]);
    const tenancy = all.find((m) => m.kind === 'ClusterRole' && m.metadata.name === 'skylift-tenancy');
    expect(
      rulesOf(tenancy as Manifest)
        .flatMap((r) => r.resources)
        .sort(),
    ).toEqual(
      [
        'events',
        'namespaces',
        'teampolicies',
        'teampolicies/status',
        ...clusterPlurals,
        ...clusterPlurals.map((p) => `${p}/status`),
      ].sort(),
    );
    expect(rulesOf(tenancy as Manifest).flatMap((r) => r.resources)).not.toContain('secrets');
    const roles = all.filter((m) => m.kind === 'Role' && m.metadata.name === 'skylift');
    expect(roles.map((r) => r.metadata.namespace).sort()).toEqual(['team-a', 'team-b']);
    expect(podSpec(one(all, 'Deployment')).containers[0]?.args).toContain('--namespaces=team-a,team-b');
  });

  it('adds the kinds to the built-in admin/edit and view roles (never status), unless turned off', async () => {
    const edit = defaults.find((m) => m.kind === 'ClusterRole' && m.metadata.name === 'skylift-edit');
    const view = defaults.find((m) => m.kind === 'ClusterRole' && m.metadata.name === 'skylift-view');
    expect(edit?.metadata.labels).toMatchObject({
      'rbac.authorization.k8s.io/aggregate-to-admin': 'true',
      'rbac.authorization.k8s.io/aggregate-to-edit': 'true',
    });
    expect(view?.metadata.labels).toMatchObject({ 'rbac.authorization.k8s.io/aggregate-to-view': 'true' });
    for (const role of [edit, view]) {
      if (role === undefined) throw new Error('missing aggregated ClusterRole');
      const resources = rulesOf(role).flatMap((r) => r.resources);
      expect(resources.sort()).toEqual([...plurals].sort());
    }
    expect(rulesOf(view as Manifest).flatMap((r) => r.verbs)).toEqual(['get', 'list', 'watch']);
    const off = docs(await helmTemplate({ values: { rbac: { aggregateToDefaultRoles: false } } }));
    expect(off.filter((m) => m.kind === 'ClusterRole').map((m) => m.metadata.name)).toEqual([
      'skylift',
      'skylift-tenancy',
      'skylift-gateway-api',
    ]);
  });

  it('installs the CRDs from crds/, kept on uninstall', () => {
    const crds = defaults.filter((m) => m.kind === 'CustomResourceDefinition');
    expect(crds.map((c) => c.metadata.name).sort()).toEqual(
      allCrds()
        .map((c) => c.metadata.name)
        .sort(),
    );
    expect(crds.map((c) => c.metadata.name)).toContain('teampolicies.aws.skylift.dev');
    for (const crd of crds) {
      expect(crd.metadata.annotations?.['helm.sh/resource-policy']).toBe('keep');
      const file = readFileSync(
        join(repoRoot, 'crds', `aws.skylift.dev_${crd.metadata.name.split('.')[0] ?? ''}.yaml`),
        'utf8',
      );
      const committed = docs(file)[0] as Manifest;
      expect((crd as unknown as { spec: unknown }).spec).toEqual(
        (committed as unknown as { spec: unknown }).spec,
      );
    }
  });

  it('installs the Gateway API’s standard-channel CRDs only with gatewayAPI.installCRDs, as the module ships them, and changes nothing else', async () => {
    const isGatewayApi = (m: Manifest): boolean =>
      m.kind === 'CustomResourceDefinition' && m.metadata.name.endsWith('.gateway.networking.k8s.io');
    expect(defaults.filter(isGatewayApi)).toEqual([]);
    // What hack/install-gateway-api.sh copied from sigs.k8s.io/gateway-api, as make dev installs it.
    const upstream = (await gatewayApiCrds()) as unknown as Manifest[];
    const on = docs(await helmTemplate({ values: { gatewayAPI: { installCRDs: true } } }));
    const installed = on.filter(isGatewayApi);
    expect(installed.map((c) => c.metadata.name).sort()).toEqual(upstream.map((c) => c.metadata.name).sort());
    expect(installed.map((c) => c.metadata.name)).toEqual(
      expect.arrayContaining(
        ['gatewayclasses', 'gateways', 'httproutes', 'grpcroutes', 'referencegrants'].map(
          (p) => `${p}.gateway.networking.k8s.io`,
        ),
      ),
    );
    for (const crd of installed) {
      const want = upstream.find((u) => u.metadata.name === crd.metadata.name) as Manifest;
      expect((crd as unknown as { spec: unknown }).spec, crd.metadata.name).toEqual(
        (want as unknown as { spec: unknown }).spec,
      );
      // Upstream's annotations (its release and channel, which implementations read) and the chart's own.
      expect(crd.metadata.annotations).toEqual({
        ...want.metadata.annotations,
        'helm.sh/resource-policy': 'keep',
      });
      expect(crd.metadata.annotations?.['gateway.networking.k8s.io/bundle-version']).toBe(
        pinnedVersions().GATEWAY_API_VERSION,
      );
      expect(crd.metadata.labels).toMatchObject({
        ...want.metadata.labels,
        'app.kubernetes.io/managed-by': 'Helm',
        'app.kubernetes.io/version': pinnedVersions().GATEWAY_API_VERSION,
      });
    }
    expect(on.filter((m) => !isGatewayApi(m))).toEqual(defaults);
    const notKept = docs(
      await helmTemplate({ values: { gatewayAPI: { installCRDs: true, keep: false } } }),
    ).filter(isGatewayApi);
    expect(notKept).toHaveLength(installed.length);
    for (const crd of notKept) expect(crd.metadata.annotations?.['helm.sh/resource-policy']).toBeUndefined();
    expect(
      await helm([
        'lint',
        '--strict',
        chartDir,
        '--set',
        'serviceAccount.roleArn=arn:aws:iam::1:role/x',
        '--set',
        'gatewayAPI.installCRDs=true',
      ]),
    ).toContain('0 chart(s) failed');
  });

  it('is accepted by kube-apiserver (kubectl apply --dry-run=server), with IRSA and namespaced RBAC too', async () => {
    const client = kubeClient();
    const ns = await newNamespace(client, 'chart');
    // PodSecurity admission warns (on stderr) about a Deployment whose pods break "restricted".
    const label = ['label', 'namespace', ns, 'pod-security.kubernetes.io/warn=restricted'];
    expect((await kubectl(stackInfo().adminKubeconfig, label)).code).toBe(0);
    for (const values of [
      {},
      { serviceAccount: { roleArn: 'arn:aws:iam::1:role/x' }, watchNamespaces: [ns] },
      { gatewayAPI: { installCRDs: true } },
    ]) {
      const r = await serverDryRun(await helmTemplate({ namespace: ns, values }));
      expect(r.stderr).toBe('');
      expect(r.code).toBe(0);
      expect(r.stdout).toMatch(/deployment\.apps\/skylift serverside-applied \(server dry run\)/);
      expect(r.stdout).toMatch(/clusterrole|role\.rbac/);
      if ('gatewayAPI' in values)
        expect(r.stdout).toMatch(
          /customresourcedefinition\.apiextensions\.k8s\.io\/httproutes\.gateway\.networking\.k8s\.io serverside-applied \(server dry run\)/,
        );
    }
  });
  it('enforces TeamPolicies at admission: a ValidatingAdmissionPolicy and binding per kind, accepted by kube-apiserver', async () => {
    interface Vap {
      spec: {
        paramKind: { apiVersion: string; kind: string };
        matchConstraints: { resourceRules: { resources: string[]; operations: string[] }[] };
        matchConditions: { name: string; expression: string }[];
        validations: { expression: string; messageExpression: string; reason: string }[];
      };
    }
    interface Binding {
      spec: {
        policyName: string;
        validationActions: string[];
        paramRef: { selector: { matchLabels: Record<string, string> }; parameterNotFoundAction: string };
        matchResources?: unknown;
      };
    }
    const selector = { 'skylift.dev/install': 'blue', tier: 'prod' };
    const client = kubeClient();
    const ns = await newNamespace(client, 'chart-vap');
    const text = await helmTemplate({ namespace: ns, values: { teamPolicySelector: selector } });
    const all = docs(text);
    const policies = all.filter((m) => m.kind === 'ValidatingAdmissionPolicy');
    const bindings = all.filter((m) => m.kind === 'ValidatingAdmissionPolicyBinding');
    expect(policies.map((p) => p.metadata.name).sort()).toEqual([...policyNames].sort());
    expect(policyNames).not.toEqual([]);
    for (const p of policies) {
      const spec = (p as unknown as Vap).spec;
      expect(spec.paramKind).toEqual({ apiVersion: 'aws.skylift.dev/v1alpha1', kind: 'TeamPolicy' });
      // Never DELETE; never the operator's own requests (its finalizer on a now-forbidden object).
      expect(spec.matchConstraints.resourceRules.flatMap((r) => r.operations)).toEqual(['CREATE', 'UPDATE']);
      expect(spec.matchConditions).toContainEqual({
        name: 'not-the-operator',
        expression: `request.userInfo.username != 'system:serviceaccount:${ns}:skylift'`,
      });
      // Every rule passes unless the TeamPolicy selects the request's namespace.
      for (const v of spec.validations) {
        expect(v.expression.startsWith('!variables.selected || (')).toBe(true);
        expect(v.messageExpression.startsWith("'TeamPolicy ' + params.metadata.name + ' forbids ")).toBe(
          true,
        );
        expect(v.reason).toBe('Forbidden');
      }
      const binding = bindings.find((b) => b.metadata.name === p.metadata.name) as unknown as Binding;
      expect(binding.spec).toEqual({
        policyName: p.metadata.name,
        validationActions: ['Deny'],
        paramRef: { selector: { matchLabels: selector }, parameterNotFoundAction: 'Allow' },
      });
    }
    // The operator honours the same TeamPolicies.
    expect(podSpec(one(all, 'Deployment')).containers[0]?.args).toContain(
      '--team-policy-selector=skylift.dev/install=blue,tier=prod',
    );
    const r = await serverDryRun(text);
    expect(r.stderr).toBe('');
    expect(r.code).toBe(0);
    for (const name of policyNames) {
      expect(r.stdout).toContain(
        `validatingadmissionpolicy.admissionregistration.k8s.io/${name} serverside-applied (server dry run)`,
      );
      expect(r.stdout).toContain(
        `validatingadmissionpolicybinding.admissionregistration.k8s.io/${name} serverside-applied (server dry run)`,
      );
    }

    // By default every TeamPolicy; with watchNamespaces only those namespaces; or turned off.
    for (const name of policyNames) {
      const defaultBinding = one(defaults, 'ValidatingAdmissionPolicyBinding', name);
      expect((defaultBinding as unknown as Binding).spec.paramRef.selector).toEqual({ matchLabels: {} });
    }
    expect(podSpec(one(defaults, 'Deployment')).containers[0]?.args.join(' ')).not.toContain(
      'team-policy-selector',
    );
    // Failing closed is asked for, not the default (a cluster with no TeamPolicy is one team).
    expect(podSpec(one(defaults, 'Deployment')).containers[0]?.args.join(' ')).not.toContain(
      'team-policy-required',
    );
    const required = docs(await helmTemplate({ values: { teamPolicyRequired: true } }));
    expect(podSpec(one(required, 'Deployment')).containers[0]?.args).toContain('--team-policy-required=true');
    // And admission refuses every create and update while no TeamPolicy exists.
    for (const name of policyNames) {
      expect(
        (one(required, 'ValidatingAdmissionPolicyBinding', name) as unknown as Binding).spec.paramRef
          .parameterNotFoundAction,
      ).toBe('Deny');
    }
    const watching = docs(await helmTemplate({ values: { watchNamespaces: ['team-a'] } }));
    for (const name of policyNames) {
      expect(
        (one(watching, 'ValidatingAdmissionPolicyBinding', name) as unknown as Binding).spec.matchResources,
      ).toEqual({
        namespaceSelector: {
          matchExpressions: [{ key: 'kubernetes.io/metadata.name', operator: 'In', values: ['team-a'] }],
        },
      });
    }
    const off = docs(await helmTemplate({ values: { admissionPolicy: { enabled: false } } }));
    expect(off.filter((m) => m.kind.startsWith('ValidatingAdmissionPolicy'))).toEqual([]);
  });

  it('adds a ServiceMonitor, the alerts of deploy/monitoring/rules.yaml and the dashboard when asked, accepted by kube-apiserver', async () => {
    const all = docs(
      await helmTemplate({
        values: {
          metrics: {
            serviceMonitor: { enabled: true },
            prometheusRule: { enabled: true },
            grafanaDashboard: { enabled: true },
          },
        },
      }),
    );
    const dashboard = one(all, 'ConfigMap', 'skylift-dashboard') as unknown as {
      data: Record<string, string>;
    };
    expect(JSON.parse(dashboard.data['skylift.json'] ?? '')).toEqual(
      JSON.parse(readFileSync(join(repoRoot, 'deploy/monitoring/grafana-dashboard.json'), 'utf8')),
    );
    const monitor = one(all, 'ServiceMonitor') as unknown as {
      spec: { endpoints: { port: string; relabelings: { targetLabel: string; replacement: string }[] }[] };
    };
    expect(monitor.spec.endpoints[0]?.port).toBe('metrics');
    // The rules and the dashboard select job="skylift".
    expect(monitor.spec.endpoints[0]?.relabelings).toContainEqual({
      targetLabel: 'job',
      replacement: 'skylift',
    });
    const rule = one(all, 'PrometheusRule') as unknown as { spec: unknown };
    const source = parse(readFileSync(join(repoRoot, 'deploy/monitoring/rules.yaml'), 'utf8')) as unknown;
    expect(rule.spec).toEqual(source);

    // The Prometheus Operator's CRDs are not part of this stack: stand-ins that accept any spec let
    // the apiserver check everything else (names, namespaces, labels) in a server-side dry run.
    for (const [plural, kind] of [
      ['servicemonitors', 'ServiceMonitor'],
      ['prometheusrules', 'PrometheusRule'],
    ] as const) {
      const stub = {
        apiVersion: 'apiextensions.k8s.io/v1',
        kind: 'CustomResourceDefinition',
        metadata: { name: `${plural}.monitoring.coreos.com` },
        spec: {
          group: 'monitoring.coreos.com',
          scope: 'Namespaced',
          names: { plural, kind, singular: kind.toLowerCase(), listKind: `${kind}List` },
          versions: [
            {
              name: 'v1',
              served: true,
              storage: true,
              schema: { openAPIV3Schema: { type: 'object', 'x-kubernetes-preserve-unknown-fields': true } },
            },
          ],
        },
      };
      const created = await kubectl(
        stackInfo().adminKubeconfig,
        ['apply', '--server-side', '-f', '-'],
        JSON.stringify(stub),
      );
      expect(created.code, created.stderr).toBe(0);
      await kubectl(stackInfo().adminKubeconfig, [
        'wait',
        '--for=condition=Established',
        `crd/${plural}.monitoring.coreos.com`,
      ]);
    }
    const ns = await newNamespace(kubeClient(), 'chart-mon');
    const r = await serverDryRun(
      await helmTemplate({
        namespace: ns,
        values: {
          metrics: {
            serviceMonitor: { enabled: true },
            prometheusRule: { enabled: true },
            grafanaDashboard: { enabled: true },
          },
        },
      }),
    );
    expect(r.stderr).toBe('');
    expect(r.stdout).toMatch(
      /servicemonitor\.monitoring\.coreos\.com\/skylift serverside-applied \(server dry run\)/,
    );
    expect(r.stdout).toMatch(
      /prometheusrule\.monitoring\.coreos\.com\/skylift serverside-applied \(server dry run\)/,
    );
  });
});

describe('kustomize base', () => {
  it('is the chart rendered with its default values (make generate keeps it so)', async () => {
    const { stdout } = await promisify(execFile)(process.execPath, [
      join(repoRoot, 'tools/renderKustomize.ts'),
      '--check',
    ]);
    expect(stdout).toContain('up to date');
  });

  it.each(['deploy/kustomize/base', 'deploy/kustomize/overlays/eks'])(
    '%s renders and is accepted by kube-apiserver',
    async (dir) => {
      const rendered = await kubectl(stackInfo().adminKubeconfig, ['kustomize', join(repoRoot, dir)]);
      expect(rendered.stderr).toBe('');
      const all = docs(rendered.stdout);
      expect(all.map((m) => m.kind)).toEqual(
        expect.arrayContaining(['Namespace', 'CustomResourceDefinition', 'Deployment']),
      );
      for (const m of all.filter(
        (x) =>
          x.kind !== 'Namespace' && x.kind !== 'CustomResourceDefinition' && !x.kind.startsWith('Cluster'),
      )) {
        expect(m.metadata.namespace, `${m.kind}/${m.metadata.name}`).toBe('skylift-system');
      }
      // The Namespace must exist for a server-side dry run of what goes into it. It enforces the
      // "restricted" Pod Security Standard, so PodSecurity admission would warn on stderr about a
      // Deployment whose pods break it.
      const nsFile = join(repoRoot, 'deploy/kustomize/base/namespace.yaml');
      expect(
        (await kubectl(stackInfo().adminKubeconfig, ['apply', '--server-side', '-f', nsFile])).code,
      ).toBe(0);
      const r = await serverDryRun(rendered.stdout);
      expect(r.stderr).toBe('');
      expect(r.code).toBe(0);
      expect(r.stdout).toContain('deployment.apps/skylift');
      if (dir.endsWith('eks')) {
        const sa = one(all, 'ServiceAccount');
        expect(sa.metadata.annotations?.['eks.amazonaws.com/role-arn']).toMatch(
          /^arn:aws:iam::\d{12}:role\//,
        );
        const args = podSpec(one(all, 'Deployment')).containers[0]?.args ?? [];
        expect(args).toEqual(expect.arrayContaining(['--region=eu-west-1', '--cluster-id=prod-eu-1']));
        expect(args.filter((a) => a.startsWith('--cluster-id'))).toHaveLength(1);
      }
    },
  );
});
