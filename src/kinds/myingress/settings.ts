// MyIngress's settings: its flags of `skylift run`, their defaults, and their parsing.
import { durationSetting, formatDuration } from '../../runtime/settings.ts';
import type { KindFlag } from '../module.ts';

/** Tuning of the MyIngress controller. */
export interface MyIngressSettings {
  /** First interval between looks at a load balancer that is not Ready yet (longer waits are polled less often). */
  readonly pollMs: number;
  /**
   * Longest time between two full looks at a load balancer's children (listeners, rules, target
   * groups and their targets, attributes, tags); between them a resync describes the load
   * balancer alone and recalls the rest (docs/myingress.md#what-a-resync-checks).
   */
  readonly fullCheckMs: number;
  /**
   * How often the target health of Pods waiting for the target-health readiness gate is read (one
   * DescribeTargetHealth per target group routing to them), until the gate opens.
   */
  readonly gatePollMs: number;
  /**
   * How long one list of an account's ACM certificates answers every object's
   * spec.listeners[].certificateHosts before the next look reads it again (one ListCertificates
   * per account and region per period, shared by all objects).
   */
  readonly certificateListMaxAgeMs: number;
}

export const defaultMyIngressSettings: MyIngressSettings = {
  pollMs: 5000,
  fullCheckMs: 3_600_000,
  gatePollMs: 2000,
  certificateListMaxAgeMs: 300_000,
};

/** MyIngress's flags. */
export const myIngressFlags: readonly KindFlag[] = [
  {
    name: 'elbv2-full-check-period',
    env: 'SKYLIFT_ELBV2_FULL_CHECK_PERIOD',
    placeholder: 'DURATION',
    usage: `longest time between two full looks at a MyIngress's listeners, rules, target groups, targets, attributes and tags; resyncs in between describe the load balancer alone (default ${formatDuration(defaultMyIngressSettings.fullCheckMs)})`,
  },
  {
    name: 'target-health-gate-poll-period',
    env: 'SKYLIFT_TARGET_HEALTH_GATE_POLL_PERIOD',
    placeholder: 'DURATION',
    usage: `how often the target health of Pods waiting for the skylift.dev/target-health readiness gate is read (one DescribeTargetHealth per target group routing to them) until their gate opens (default ${formatDuration(defaultMyIngressSettings.gatePollMs)})`,
  },
  {
    name: 'acm-certificate-list-max-age',
    env: 'SKYLIFT_ACM_CERTIFICATE_LIST_MAX_AGE',
    placeholder: 'DURATION',
    usage: `how long one list of an account's ACM certificates (ListCertificates, shared by every MyIngress of the account and region) answers spec.listeners[].certificateHosts before it is read again; a certificate issued or renewed is picked up at the first look after (default ${formatDuration(defaultMyIngressSettings.certificateListMaxAgeMs)})`,
  },
];

/** MyIngress's settings from flag values by name; absent ones take the defaults. Throws SettingsError. Pure. */
export function parseMyIngressSettings(values: ReadonlyMap<string, string>): MyIngressSettings {
  return {
    pollMs: defaultMyIngressSettings.pollMs,
    fullCheckMs: durationSetting(values, 'elbv2-full-check-period', defaultMyIngressSettings.fullCheckMs),
    gatePollMs: durationSetting(
      values,
      'target-health-gate-poll-period',
      defaultMyIngressSettings.gatePollMs,
    ),
    certificateListMaxAgeMs: durationSetting(
      values,
      'acm-certificate-list-max-age',
      defaultMyIngressSettings.certificateListMaxAgeMs,
    ),
  };
}
