// The MyIngress kind: an Application Load Balancer with its listeners, rules and target groups.
import type { KindModule } from '../module.ts';
import { loadBalancerGuardrailSection, myIngressAdmission } from './guardrails.ts';
import { myIngressCrd, myIngressType, myIngressFieldContract, type MyIngress } from './api.ts';
import { BackendReason } from './backends.ts';
import { CertificateReason } from './certificateHosts.ts';
import { myIngressController } from './controller.ts';
import { myIngressFlags, parseMyIngressSettings } from './settings.ts';

export const myIngressKind: KindModule = {
  type: myIngressType,
  names: ['myingress', 'myingresses', 'ming', `${myIngressType.plural}.${myIngressType.group}`],
  traceShows: 'load balancer → listeners → rules; target groups → targets with health',
  crd: myIngressCrd,
  fieldContract: myIngressFieldContract,
  guardrails: loadBalancerGuardrailSection,
  admission: myIngressAdmission,
  flags: myIngressFlags,
  configure(values) {
    const settings = parseMyIngressSettings(values);
    return {
      module: myIngressKind,
      controller: (plumbing) => myIngressController(plumbing, settings),
      // Imported when a trace asks for it: trace.ts loads the kind's AWS SDK.
      trace: async (obj, ctx) => (await import('./trace.ts')).traceMyIngress(obj, ctx),
    };
  },
  devFlags: [],
  commands: [],
  healthCheck: {
    lua: new URL('./health.lua', import.meta.url),
    // Ready reasons where the load balancer runs but only a person can make a part of it work.
    constants: {
      actionRequiredReasons: [...Object.values(BackendReason), ...Object.values(CertificateReason)],
    },
  },
  summarize(obj: MyIngress): string[] {
    const s = obj.status ?? {};
    return [`  Load balancer  ${text(s.dnsName)}   (MyIngress ${obj.metadata.name}, ${text(s.state)})`];
  },
};

function text(v: unknown): string {
  return typeof v === 'string' ? v : '?';
}
