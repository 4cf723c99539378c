import type { ResourceType } from '../runtime/kube/resource.ts';
import { apiGroup, apiVersion } from './crd.ts';

/**
 * The MyIngress resource type, as other kinds refer to it (DNSRecord aliases
 * follow a MyIngress's load balancer). Its full API arrives with the MyIngress
 * controller.
 */
export const myIngressType: ResourceType = {
  group: apiGroup,
  version: apiVersion,
  plural: 'myingresses',
  kind: 'MyIngress',
  namespaced: true,
};

/** The MyIngress status fields a DNS alias needs. */
export interface MyIngressAliasStatus {
  dnsName?: string;
  canonicalHostedZoneId?: string;
}
