// MyIngress's settings and their defaults (it has no flags of its own yet).

/** Tuning of the MyIngress controller. */
export interface MyIngressSettings {
  /** First interval between looks at a load balancer that is not Ready yet (longer waits are polled less often). */
  readonly pollMs: number;
}

export const defaultMyIngressSettings: MyIngressSettings = { pollMs: 5000 };
