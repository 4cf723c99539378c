// The MyIngressGroup kind: a shared Application Load Balancer whose rules come from the
// MyIngresses naming it. It lives in MyIngress's folder because it is MyIngress's load balancer
// machinery applied to a merged spec (group/adapter.ts): a kind may import no other kind's code
// but its api.ts (test/unit/architecture.test.ts), and forking that machinery is what issue 30
// asks not to do.
import type { KindModule } from '../../module.ts';
import {
  myIngressGroupCrd,
  myIngressGroupFieldContract,
  myIngressGroupType,
  type MyIngressGroup,
} from './api.ts';
import { GroupReason } from './adapter.ts';
import { gatewayTenancyOptions, myIngressGroupController } from './controller.ts';
import { myIngressFlags, parseMyIngressSettings } from '../settings.ts';
import { GatewayController } from '../gateway/gatewayController.ts';
import { gatewayFlags, parseGatewaySettings } from '../gateway/settings.ts';
import { gatewayGroupController } from '../gateway/groupController.ts';
import { dnsRecordResource } from '../gateway/dns.ts';

export const myIngressGroupKind: KindModule = {
  type: myIngressGroupType,
  names: [
    'myingressgroup',
    'myingressgroups',
    'mingg',
    `${myIngressGroupType.plural}.${myIngressGroupType.group}`,
  ],
  traceShows:
    'shared load balancer → listeners → rules (each with its member); target groups → targets; members with their states',
  crd: myIngressGroupCrd,
  fieldContract: myIngressGroupFieldContract,
  // The Gateway controller's flags are the group kind's own.
  flags: gatewayFlags,
  // A group's load balancer (and a Gateway's) is run by MyIngress's machinery: MyIngress's flags
  // (--elbv2-full-check-period, …) tune it too, with the same values.
  sharedFlags: myIngressFlags,
  // The Gateway controller publishes routes' hostnames as DNSRecords (gateway/dns.ts).
  gatewayApiMakes: [dnsRecordResource],
  configure(values) {
    const settings = parseMyIngressSettings(values);
    const gatewayDefaults = parseGatewaySettings(values);
    return {
      module: myIngressGroupKind,
      controller: (plumbing) => myIngressGroupController(plumbing, settings),
      gatewayApi: (plumbing) => [
        new GatewayController({
          client: plumbing.client,
          clock: plumbing.clock,
          logger: plumbing.logger.child({ controller: 'gateway' }),
          metrics: plumbing.metrics,
          namespaces: plumbing.settings.namespaces,
          defaults: gatewayDefaults,
          ...gatewayTenancyOptions(plumbing, settings),
        }),
        gatewayGroupController(plumbing, settings),
      ],
      // Imported when a trace asks for it: trace.ts loads the kind's AWS SDK.
      trace: async (obj, ctx) => (await import('./trace.ts')).traceMyIngressGroup(obj, ctx),
    };
  },
  // The local stack's subnets carry the public role tag (dev/awsAccount.ts), and its clients come
  // from loopback: internet-facing Gateways there (the managed security group admits anyone).
  devFlags: ['--gateway-scheme', 'internet-facing', '--gateway-subnet-tags', 'kubernetes.io/role/elb=1'],
  commands: [],
  healthCheck: {
    // MyIngress's: a shared load balancer is healthy, failed or waiting for a person as one of a
    // MyIngress's own is (NoMembers is a reason only a person removes).
    lua: new URL('../health.lua', import.meta.url),
    constants: { actionRequiredReasons: [GroupReason.NoMembers] },
  },
  summarize(obj: MyIngressGroup): string[] {
    const s = obj.status ?? {};
    return [
      `  Load balancer  ${typeof s.dnsName === 'string' ? s.dnsName : '?'}   (MyIngressGroup ${obj.metadata.name})`,
    ];
  },
};
