// A group's HTTPS listeners served from TLS Secrets (listeners[].certificateRefs, and a Gateway's
// certificateRefs): each Secret imported into ACM as the group's (src/providers/acm/imports.ts),
// its ARN put into the merged spec's listener as the MyIngress machinery serves any ACM
// certificate — the default certificate first, the rest by SNI. Looks (observe) read the Secrets
// and use the ARNs imported before; imports happen only in create and update (ensure), and a
// Secret whose certificate changed since is re-imported into the same ARN.
import type { OwnershipTags } from '../../../apis/managed.ts';
import type { ImportedCertificates } from '../../../providers/acm/imports.ts';
import { validateTlsSecret, type TlsSecret } from '../../../providers/acm/tlsSecret.ts';
import { RequeueAfter } from '../../../runtime/errors.ts';
import type { Clock } from '../../../runtime/clock.ts';
import type { ListenerSpec, MyIngressSpec } from '../api.ts';
import type { CertificateSecretRef, GroupListenerSpec } from './api.ts';

/** What the group's certificates read and write. */
export interface GroupCertificateDeps {
  /** The Secret `namespace/name` read now (undefined: it does not exist). Has the client's deadline. */
  readonly secret: (namespace: string, name: string) => Promise<TlsSecret | undefined>;
  /** The imports of the account and region the group's load balancer is in. */
  readonly imports: ImportedCertificates;
  readonly clock: Clock;
}

/** How long a group waits for a missing Secret before it looks again. */
const missingSecretRetryMs = 30_000;

/** The key of a group's Secret in the memory. Pure. */
function keyOf(owner: OwnershipTags, ref: CertificateSecretRef): string {
  return `${owner.uid}/${ref.namespace}/${ref.name}`;
}

/** The merged spec's listeners, each with its Secrets' ARNs (`arnOf` undefined: not known). Pure. */
export function withSecretCertificates(
  spec: MyIngressSpec,
  groupListeners: readonly GroupListenerSpec[],
  arnOf: (ref: CertificateSecretRef) => string | undefined,
): MyIngressSpec {
  const listeners = (spec.listeners ?? []).map((l): ListenerSpec => {
    const refs = groupListeners.find((g) => g.port === l.port)?.certificateRefs ?? [];
    if (refs.length === 0) return l;
    const arns = refs.map(arnOf).filter((a): a is string => a !== undefined);
    const certificateArn = l.certificateArn ?? arns[0];
    const sni = [...(l.additionalCertificateArns ?? []), ...arns].filter(
      (a, i, all) => a !== certificateArn && all.indexOf(a) === i,
    );
    return {
      ...l,
      ...(certificateArn !== undefined ? { certificateArn } : {}),
      ...(sni.length > 0 ? { additionalCertificateArns: sni } : {}),
    };
  });
  return { ...spec, listeners };
}

/**
 * One adapter's Secret certificates: what it imported (Secret → fingerprint and ARN) remembered
 * between looks, lost at a restart (then found again by tag in ACM: ensure never imports twice).
 */
export class GroupCertificates {
  private readonly d: GroupCertificateDeps;
  private readonly known = new Map<string, { fingerprint: string; arn: string }>();

  constructor(deps: GroupCertificateDeps) {
    this.d = deps;
  }

  /** The Secrets the group's listeners name. Pure. */
  static refsOf(listeners: readonly GroupListenerSpec[]): CertificateSecretRef[] {
    return listeners.flatMap((l) => l.certificateRefs ?? []);
  }

  /**
   * The spec with the ARNs of Secrets imported before and unchanged since; `pending` names the
   * Secrets to import (new, changed, or not known since a restart). Reads each Secret (a GET);
   * never writes. Throws RequeueAfter for a Secret that does not exist.
   */
  async look(
    owner: OwnershipTags,
    listeners: readonly GroupListenerSpec[],
    spec: MyIngressSpec,
  ): Promise<{ spec: MyIngressSpec; pending: string[] }> {
    const pending: string[] = [];
    const arns = new Map<string, string>();
    for (const ref of GroupCertificates.refsOf(listeners)) {
      const secret = await this.read(ref);
      const fingerprint = validateTlsSecret(secret, this.d.clock.now()).fingerprint;
      const known = this.known.get(keyOf(owner, ref));
      if (known?.fingerprint === fingerprint) arns.set(keyOf(owner, ref), known.arn);
      else pending.push(`${ref.namespace}/${ref.name}`);
    }
    return { spec: withSecretCertificates(spec, listeners, (r) => arns.get(keyOf(owner, r))), pending };
  }

  /**
   * The spec with every Secret imported (ensure: imported, re-imported into the same ARN, or found
   * current), and the ARNs served. Idempotent; writes ACM only as ensure does.
   */
  async ensure(
    owner: OwnershipTags,
    listeners: readonly GroupListenerSpec[],
    spec: MyIngressSpec,
  ): Promise<{ spec: MyIngressSpec; arns: string[] }> {
    const arns = new Map<string, string>();
    for (const ref of GroupCertificates.refsOf(listeners)) {
      const secret = await this.read(ref);
      const ensured = await this.d.imports.ensure(secret, owner);
      const fingerprint = validateTlsSecret(secret, this.d.clock.now()).fingerprint;
      this.known.set(keyOf(owner, ref), { fingerprint, arn: ensured.arn });
      arns.set(keyOf(owner, ref), ensured.arn);
    }
    return {
      spec: withSecretCertificates(spec, listeners, (r) => arns.get(keyOf(owner, r))),
      arns: [...new Set(arns.values())],
    };
  }

  /**
   * Deletes the group's imports not in `keep` (its listeners no longer serve them), and forgets
   * them. Idempotent; a certificate a listener still serves throws CertificateInUseError (requeue).
   */
  async release(owner: OwnershipTags, keep: readonly string[]): Promise<void> {
    await this.d.imports.release(owner, keep);
    for (const [k, v] of this.known)
      if (k.startsWith(`${owner.uid}/`) && !keep.includes(v.arn)) this.known.delete(k);
  }

  private async read(ref: CertificateSecretRef): Promise<TlsSecret> {
    const secret = await this.d.secret(ref.namespace, ref.name);
    if (secret === undefined)
      throw new RequeueAfter(
        missingSecretRetryMs,
        `Secret ${ref.namespace}/${ref.name} (listeners[].certificateRefs) does not exist; create it (type kubernetes.io/tls) or remove the reference`,
        'SecretNotFound',
      );
    return secret;
  }
}
