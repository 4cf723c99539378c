// A live load balancer's listeners and their rules: describing them for
// observe, and the update steps that create, modify and delete them.
import {
  CreateListenerCommand,
  CreateRuleCommand,
  DeleteListenerCommand,
  DeleteRuleCommand,
  AddListenerCertificatesCommand,
  DescribeListenerCertificatesCommand,
  DescribeListenersCommand,
  DescribeRulesCommand,
  RemoveListenerCertificatesCommand,
  type Certificate,
  ModifyListenerCommand,
  ModifyRuleCommand,
  type Action,
  type Listener,
  type Rule,
} from '@aws-sdk/client-elastic-load-balancing-v2';
import { ownedTagList } from '../../providers/aws/tags.ts';
import type { ListenerSpec, RuleSpec } from './api.ts';
import type { IngressUpdate, MyIngressAdapterDeps } from './deps.ts';
import {
  listenerBaseMatches,
  listenerMatches,
  ruleMatches,
  sdkActions,
  sdkConditions,
  sniCertificates,
  sniPlan,
} from './desired.ts';
import { elbv2Call } from './elbv2.ts';
import { TerminalError } from '../../runtime/errors.ts';

type ListenerDeps = Pick<MyIngressAdapterDeps, 'elbv2' | 'elbv2Create'>;

/**
 * The listeners and rules of MyIngresses' load balancers. Reads throw typed
 * errors when AWS cannot be asked; each update step changes only what
 * differs from the spec and appends what it changed to the update. Creates
 * go without SDK retries: one whose answer was lost is found by the next
 * observe instead of being created twice.
 */
export class Listeners {
  private readonly d: ListenerDeps;

  constructor(deps: ListenerDeps) {
    this.d = deps;
  }

  /** The load balancer's listeners, and each one's rules (the default rule left out). Read-only. */
  async observe(lbArn: string): Promise<{ listeners: Listener[]; rules: Map<string, Rule[]> }> {
    const described =
      (
        await elbv2Call('describe listeners', () =>
          this.d.elbv2.send(new DescribeListenersCommand({ LoadBalancerArn: lbArn })),
        )
      ).Listeners ?? [];
    // DescribeListeners names only the default certificate: an HTTPS listener's SNI certificates
    // are asked for on their own, and kept after the default (see desired.ts, sniCertificates).
    const listeners: Listener[] = [];
    for (const l of described)
      listeners.push(
        l.Protocol === 'HTTPS' && l.ListenerArn !== undefined
          ? { ...l, Certificates: await this.certificatesOf(l.ListenerArn) }
          : l,
      );
    const rules = new Map<string, Rule[]>();
    for (const l of listeners) {
      if (l.ListenerArn === undefined) continue;
      const out = await elbv2Call('describe rules', () =>
        this.d.elbv2.send(new DescribeRulesCommand({ ListenerArn: l.ListenerArn })),
      );
      rules.set(
        l.ListenerArn,
        (out.Rules ?? []).filter((r) => r.IsDefault !== true),
      );
    }
    return { listeners, rules };
  }

  /**
   * The update step for listeners: creates each listener the spec asks for
   * that is missing and modifies those that differ, except those `held`
   * (certificateHosts.ts). Returns every wanted listener's ARN by port.
   */
  async sync(
    u: IngressUpdate,
    observed: readonly Listener[],
    tgArns: ReadonlyMap<string, string>,
    held: ReadonlySet<number> = new Set(),
  ): Promise<Map<number, string>> {
    const listenerArns = new Map<number, string>();
    for (const want of u.mr.spec.listeners) {
      const actions = sdkActions(want.defaultAction, tgArns);
      const l = observed.find((x) => x.Port === want.port);
      if (held.has(want.port)) {
        // Held back for a certificate not found: left as AWS has it (its rules are still kept).
        if (l?.ListenerArn !== undefined) listenerArns.set(want.port, l.ListenerArn);
        continue;
      }
      if (l?.ListenerArn === undefined) {
        const larn = await this.create(u, want, actions);
        listenerArns.set(want.port, larn);
        // Without an ARN it is not remembered: the next look, finding it missing, describes it.
        if (larn !== '')
          u.applied.listener({ ...applied(want, actions), ListenerArn: larn, LoadBalancerArn: u.arn });
        u.done.push(`listener ${want.port} created`);
      } else {
        listenerArns.set(want.port, l.ListenerArn);
        const wanted = {
          protocol: want.protocol,
          certificateArn: want.certificateArn,
          sslPolicy: want.sslPolicy,
          actions,
        };
        if (
          !listenerMatches(l, { ...wanted, additionalCertificateArns: want.additionalCertificateArns ?? [] })
        ) {
          let sni = sniCertificates(l);
          if (!listenerBaseMatches(l, wanted)) {
            await this.modify(l.ListenerArn, want, actions);
            u.done.push(`listener ${want.port} modified`);
            // What the modify left of the SNI certificates (AWS keeps them; an emulator may not).
            if (want.protocol === 'HTTPS')
              sni = sniCertificates({ Certificates: await this.certificatesOf(l.ListenerArn) });
            else sni = [];
          }
          await this.syncSni(u, l.ListenerArn, want, sni);
          // What is there now: no certificate when the listener no longer asks for one.
          u.applied.listener({ ...l, Certificates: undefined, ...applied(want, actions) });
        }
      }
    }
    return listenerArns;
  }

  /**
   * The update step for rules, listener by listener (`listenerArns`, by
   * port): deletes the rules the spec no longer has, then creates the
   * missing ones and modifies those that differ.
   */
  async syncRules(
    u: IngressUpdate,
    observed: ReadonlyMap<string, readonly Rule[]>,
    listenerArns: ReadonlyMap<number, string>,
    tgArns: ReadonlyMap<string, string>,
  ): Promise<void> {
    const firstPort = u.mr.spec.listeners[0]?.port;
    for (const [port, larn] of listenerArns) {
      const have = observed.get(larn) ?? [];
      const wantRules = (u.mr.spec.rules ?? []).filter((r) => (r.listenerPort ?? firstPort) === port);
      await this.deleteUnwantedRules(u, larn, have, wantRules);
      for (const w of wantRules) await this.syncRule(u, larn, have, w, tgArns);
    }
  }

  /** The update step that deletes the listeners on ports the spec no longer has. */
  async deleteUnwanted(u: IngressUpdate, observed: readonly Listener[]): Promise<void> {
    for (const l of observed) {
      if (!u.mr.spec.listeners.some((w) => w.port === l.Port) && l.ListenerArn !== undefined) {
        const larn = l.ListenerArn;
        await elbv2Call(`delete listener ${l.Port ?? ''}`, () =>
          this.d.elbv2.send(new DeleteListenerCommand({ ListenerArn: larn })),
        );
        u.applied.listenerDeleted(larn);
        u.done.push(`listener ${l.Port ?? ''} deleted`);
      }
    }
  }

  /** An HTTPS listener's certificates, the default first (DescribeListenerCertificates, every page). */
  private async certificatesOf(listenerArn: string): Promise<Certificate[]> {
    const all: Certificate[] = [];
    let marker: string | undefined;
    // Bounded: 25 SNI certificates and the default fit in one or two pages.
    for (let page = 0; page < 10; page++) {
      const out = await elbv2Call('describe listener certificates', () =>
        this.d.elbv2.send(
          new DescribeListenerCertificatesCommand({
            ListenerArn: listenerArn,
            ...(marker !== undefined ? { Marker: marker } : {}),
          }),
        ),
      );
      all.push(...(out.Certificates ?? []));
      marker = out.NextMarker;
      if (marker === undefined || marker === '') break;
    }
    return [...all.filter((c) => c.IsDefault === true), ...all.filter((c) => c.IsDefault !== true)];
  }

  /**
   * Adds the SNI certificates the spec asks for that `have` lacks, and removes those it no longer
   * asks for, as `sniPlan` orders them (one certificate per call, within AWS's quota at every
   * moment). Throws TerminalError, sending nothing, when the spec asks for more than the quota.
   */
  private async syncSni(
    u: IngressUpdate,
    larn: string,
    want: ListenerSpec,
    have: readonly string[],
  ): Promise<void> {
    const r = sniPlan(have, want.additionalCertificateArns ?? []);
    if (!r.ok)
      throw new TerminalError(
        `listener ${want.port}: SNI certificates: ${r.error.message} (AWS’s default quota of certificates per load balancer, the default certificate not counted): use fewer additionalCertificateArns or certificateHosts`,
      );
    let added = 0;
    let removed = 0;
    for (const b of r.plan.batches) {
      const Certificates = b.children.map((c) => ({ CertificateArn: c.value }));
      if (b.op === 'create') {
        await elbv2Call(`add certificates to listener ${want.port}`, () =>
          this.d.elbv2.send(new AddListenerCertificatesCommand({ ListenerArn: larn, Certificates })),
        );
        added += Certificates.length;
      } else {
        await elbv2Call(`remove certificates from listener ${want.port}`, () =>
          this.d.elbv2.send(new RemoveListenerCertificatesCommand({ ListenerArn: larn, Certificates })),
        );
        removed += Certificates.length;
      }
    }
    if (added > 0)
      u.done.push(`listener ${want.port}: ${added} SNI certificate${added === 1 ? '' : 's'} added`);
    if (removed > 0)
      u.done.push(`listener ${want.port}: ${removed} SNI certificate${removed === 1 ? '' : 's'} removed`);
  }

  /** Creates a listener (without SDK retries), then adds its SNI certificates; its ARN ('' if AWS gave none). */
  private async create(u: IngressUpdate, want: ListenerSpec, actions: Action[]): Promise<string> {
    const certs = certificates(want);
    // Without SDK retries (as every create): a listener whose answer was lost is found by the
    // next observe instead of being created twice.
    const out = await elbv2Call(`create listener ${want.port}`, () =>
      this.d.elbv2Create.send(
        new CreateListenerCommand({
          LoadBalancerArn: u.arn,
          Port: want.port,
          Protocol: want.protocol,
          DefaultActions: actions,
          ...(certs !== undefined ? { Certificates: certs } : {}),
          ...(want.sslPolicy !== undefined ? { SslPolicy: want.sslPolicy } : {}),
          Tags: ownedTagList(u.mr.spec.tags, u.ctx.ownership),
        }),
      ),
    );
    const larn = out.Listeners?.[0]?.ListenerArn ?? '';
    // A lost answer leaves them to the next look, which finds the listener without them.
    if (larn !== '' && (want.additionalCertificateArns ?? []).length > 0)
      await this.syncSni(u, larn, want, []);
    return larn;
  }

  private async modify(larn: string, want: ListenerSpec, actions: Action[]): Promise<void> {
    const certs = certificates(want);
    await elbv2Call(`modify listener ${want.port}`, () =>
      this.d.elbv2.send(
        new ModifyListenerCommand({
          ListenerArn: larn,
          Protocol: want.protocol,
          DefaultActions: actions,
          ...(certs !== undefined ? { Certificates: certs } : {}),
          ...(want.sslPolicy !== undefined ? { SslPolicy: want.sslPolicy } : {}),
        }),
      ),
    );
  }

  /** Deletes the listener's rules whose priority no wanted rule has. */
  private async deleteUnwantedRules(
    u: IngressUpdate,
    larn: string,
    have: readonly Rule[],
    wantRules: readonly RuleSpec[],
  ): Promise<void> {
    for (const r of have) {
      if (!wantRules.some((w) => w.priority === Number(r.Priority)) && r.RuleArn !== undefined) {
        const rarn = r.RuleArn;
        await elbv2Call(`delete rule ${r.Priority ?? ''}`, () =>
          this.d.elbv2.send(new DeleteRuleCommand({ RuleArn: rarn })),
        );
        u.applied.ruleDeleted(larn, rarn);
        u.done.push(`rule ${r.Priority ?? ''} deleted`);
      }
    }
  }

  /** Creates the wanted rule on listener `larn` (without SDK retries) or modifies it if it differs. */
  private async syncRule(
    u: IngressUpdate,
    larn: string,
    have: readonly Rule[],
    w: RuleSpec,
    tgArns: ReadonlyMap<string, string>,
  ): Promise<void> {
    const conditions = sdkConditions(w.hosts, w.paths);
    const actions = sdkActions(w.action, tgArns);
    const r = have.find((x) => Number(x.Priority) === w.priority);
    if (r?.RuleArn === undefined) {
      const out = await elbv2Call(`create rule ${w.priority}`, () =>
        this.d.elbv2Create.send(
          new CreateRuleCommand({
            ListenerArn: larn,
            Priority: w.priority,
            Conditions: conditions,
            Actions: actions,
            Tags: ownedTagList(u.mr.spec.tags, u.ctx.ownership),
          }),
        ),
      );
      const rarn = out.Rules?.[0]?.RuleArn;
      if (rarn !== undefined)
        u.applied.rule(larn, {
          RuleArn: rarn,
          Priority: String(w.priority),
          Conditions: conditions,
          Actions: actions,
          IsDefault: false,
        });
      u.done.push(`rule ${w.priority} created`);
    } else if (!ruleMatches(r, { conditions, actions })) {
      const rarn = r.RuleArn;
      await elbv2Call(`modify rule ${w.priority}`, () =>
        this.d.elbv2.send(new ModifyRuleCommand({ RuleArn: rarn, Conditions: conditions, Actions: actions })),
      );
      u.applied.rule(larn, { ...r, Conditions: conditions, Actions: actions });
      u.done.push(`rule ${w.priority} modified`);
    }
  }
}

/** A listener's settings as created or modified for `want` (what is remembered of it). Pure. */
function applied(want: ListenerSpec, actions: Action[]): Listener {
  const certs =
    want.certificateArn !== undefined
      ? [
          { CertificateArn: want.certificateArn, IsDefault: true },
          ...(want.additionalCertificateArns ?? []).map((arn) => ({ CertificateArn: arn, IsDefault: false })),
        ]
      : undefined;
  return {
    Port: want.port,
    Protocol: want.protocol,
    DefaultActions: actions,
    ...(certs !== undefined ? { Certificates: certs } : {}),
    ...(want.sslPolicy !== undefined ? { SslPolicy: want.sslPolicy } : {}),
  };
}

/** The listener's default certificate as the SDK takes it, if it has one. Pure. */
function certificates(want: ListenerSpec): { CertificateArn: string }[] | undefined {
  return want.certificateArn !== undefined ? [{ CertificateArn: want.certificateArn }] : undefined;
}
