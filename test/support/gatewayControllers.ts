// What the Gateway tests share: a control plane of their own with Skylift's and the Gateway API's
// CRDs, two subnets tagged for their Gateways' load balancers, and the two controllers of the
// Gateway API front end — the Gateway controller (Gateway and route status, each Gateway's
// MyIngressGroup) placing load balancers in those subnets, admitting loopback clients, and the
// controller of Gateways' groups (the ALB machinery) with a short poll.
import { CreateTagsCommand, type EC2Client } from '@aws-sdk/client-ec2';
import { startControlPlane, type ControlPlane } from '../../dev/controlplane.ts';
import { installCrds, installGatewayApiCrds } from '../../dev/installCrds.ts';
import { loadKubeconfig } from '../../src/runtime/kube/kubeconfigLoad.ts';
import { GatewayController } from '../../src/kinds/myingress/gateway/gatewayController.ts';
import { gatewayGroupController } from '../../src/kinds/myingress/gateway/groupController.ts';
import { gatewayTenancyOptions } from '../../src/kinds/myingress/group/controller.ts';
import { defaultMyIngressSettings } from '../../src/kinds/myingress/settings.ts';
import { KubeClient } from '../../src/runtime/kube/client.ts';
import type { TenantSource } from '../../src/tenancy/directory.ts';
import { startController, type RunningController } from './controllers.ts';
import { scratchDir } from './scratch.ts';
import { vpcWithTwoSubnets } from './vpc.ts';

/**
 * A control plane of its own (in scratch directory `name`; with kube-controller-manager when asked)
 * with Skylift's and the Gateway API's CRDs installed, and its admin client. Stop it with `cp.stop()`.
 */
export async function startGatewayControlPlane(
  name: string,
  opts: { readonly controllerManager?: boolean } = {},
): Promise<{ cp: ControlPlane; admin: KubeClient }> {
  const cp = await startControlPlane({
    dir: await scratchDir(name),
    ...(opts.controllerManager === true ? { controllerManager: true } : {}),
  });
  const admin = new KubeClient(loadKubeconfig(cp.kubeconfigPath('admin')));
  await installCrds(admin);
  await installGatewayApiCrds(admin);
  return { cp, admin };
}

/** Two subnets of a new VPC (`vpcWithTwoSubnets`'s `index`) tagged `subnetTag=1`, where Gateways' load balancers go. */
export async function gatewaySubnets(ec2: EC2Client, index: number, subnetTag: string): Promise<void> {
  const { subnets } = await vpcWithTwoSubnets(ec2, index);
  await ec2.send(new CreateTagsCommand({ Resources: subnets, Tags: [{ Key: subnetTag, Value: '1' }] }));
}

/**
 * Starts the Gateway controller and the Gateways' group controller, watching `namespaces` (comma
 * separated), with AWS at `endpoint` and the apiserver `client`; the groups resynced every
 * `resyncPeriod` (default 10m; a test that rotates Secrets wants it short); with `tenants`, routes
 * and Gateways are judged by their namespaces' TeamPolicies as the operator judges them; Gateways'
 * load balancers `scheme` (default internal). Stop each returned controller (the caller's
 * `running` list).
 */
export async function startGatewayControllers(opts: {
  readonly namespace: string;
  readonly endpoint: string;
  readonly client: KubeClient;
  readonly subnetTag: string;
  readonly resyncPeriod?: string;
  readonly tenants?: TenantSource;
  readonly scheme?: 'internal' | 'internet-facing';
}): Promise<RunningController[]> {
  const common = {
    namespace: opts.namespace,
    endpoint: opts.endpoint,
    client: opts.client,
    ...(opts.tenants !== undefined ? { tenants: opts.tenants } : {}),
  };
  const gateways = await startController(
    (s) =>
      new GatewayController({
        client: s.client,
        clock: s.clock,
        logger: s.logger,
        metrics: s.metrics,
        namespaces: s.settings.namespaces,
        defaults: {
          scheme: opts.scheme ?? 'internal',
          subnetTags: { [opts.subnetTag]: '1' },
          inboundCIDRs: ['127.0.0.0/8'],
        },
        ...gatewayTenancyOptions(s, defaultMyIngressSettings),
      }),
    common,
  );
  const groups = await startController((s) => gatewayGroupController(s, { pollMs: 300 }), {
    ...common,
    ...(opts.resyncPeriod !== undefined ? { resyncPeriod: opts.resyncPeriod } : {}),
  });
  return [gateways, groups];
}
