// A live load balancer's listeners and their rules: describing them for
// observe, and the update steps that create, modify and delete them.
import {
  AddTagsCommand,
  CreateListenerCommand,
  CreateRuleCommand,
  DeleteListenerCommand,
  DeleteRuleCommand,
  AddListenerCertificatesCommand,
  DescribeListenerCertificatesCommand,
  DescribeListenersCommand,
  DescribeRulesCommand,
  DescribeTagsCommand,
  RemoveListenerCertificatesCommand,
  type Certificate,
  ModifyListenerCommand,
  ModifyRuleCommand,
  type Listener,
  type Rule,
} from '@aws-sdk/client-elastic-load-balancing-v2';
import { ownedTagList } from '../../providers/aws/tags.ts';
import type { ChildBatch, ChildChange } from '../../runtime/childSet.ts';
import { TerminalError } from '../../runtime/errors.ts';
import { childTagList, type IngressUpdate, type MyIngressAdapterDeps } from './deps.ts';
import { defaultCertificate, listenerBaseMatches, sniCertificates, sniPlan } from './desired.ts';
import { elbv2Call } from './elbv2.ts';
import { listenerPlan, listenerRulePlan, listenerSettings } from './listenerPlan.ts';

type ListenerDeps = Pick<MyIngressAdapterDeps, 'elbv2' | 'elbv2Create'>;

/** What the listener step leaves for the steps after it. */
export interface ListenersSynced {
  /** Every wanted listener's ARN by port, in the spec's order ('' for one AWS created without giving one). */
  readonly listenerArns: ReadonlyMap<number, string>;
  /** The listeners on ports the spec no longer has: deleted last (deleteUnwanted). */
  readonly unwanted: readonly ChildChange<number, Listener>[];
}

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
      rules.set(
        l.ListenerArn,
        (await this.rulesOf(l.ListenerArn)).filter((r) => r.IsDefault !== true),
      );
    }
    return { listeners, rules };
  }

  /**
   * A listener's rules, every page: DescribeRules answers a page (moto 50 without a PageSize) and a
   * NextMarker; a shared load balancer's listener holds a rule per route or member rule. Pages of
   * 400 (AWS's largest), so one call reads the rules of a listener within the default quota.
   */
  private async rulesOf(listenerArn: string): Promise<Rule[]> {
    const all: Rule[] = [];
    let marker: string | undefined;
    // Bounded: AWS's quota of rules per load balancer can be raised to a few thousand at most.
    for (let page = 0; page < 100; page++) {
      const out = await elbv2Call('describe rules', () =>
        this.d.elbv2.send(
          new DescribeRulesCommand({
            ListenerArn: listenerArn,
            PageSize: 400,
            ...(marker !== undefined ? { Marker: marker } : {}),
          }),
        ),
      );
      all.push(...(out.Rules ?? []));
      marker = out.NextMarker;
      if (marker === undefined || marker === '') break;
    }
    return all;
  }

  /**
   * The update step for listeners, as `listenerPlan` orders it: creates each listener the spec
   * asks for that is missing and modifies those that differ, except those `held`
   * (certificateHosts.ts). Returns every wanted listener's ARN by port, in the spec's order, and
   * the listeners on ports the spec no longer has, which `deleteUnwanted` deletes once the rules
   * are done.
   */
  async sync(
    u: IngressUpdate,
    observed: readonly Listener[],
    tgArns: ReadonlyMap<string, string>,
    held: ReadonlySet<number> = new Set(),
  ): Promise<ListenersSynced> {
    const plan = listenerPlan(u.mr.spec.listeners ?? [], observed, tgArns, held);
    const arns = new Map<number, string>();
    for (const l of observed)
      if (l.Port !== undefined && l.ListenerArn !== undefined) arns.set(l.Port, l.ListenerArn);
    for (const b of plan.batches) {
      if (b.op === 'create') for (const c of b.children) arns.set(c.key, await this.create(u, c.value));
      else if (b.op === 'update') for (const c of b.children) await this.update(u, c.from, c.value);
    }
    return {
      listenerArns: new Map(
        (u.mr.spec.listeners ?? []).flatMap((w) => {
          const arn = arns.get(w.port);
          return arn !== undefined ? [[w.port, arn] as const] : [];
        }),
      ),
      unwanted: plan.deletes,
    };
  }

  /**
   * The update step for rules, listener by listener (`listenerArns`, by port), as
   * `listenerRulePlan` orders them: deletes the rules the spec no longer has, then modifies those
   * that differ and creates the missing ones.
   */
  async syncRules(
    u: IngressUpdate,
    observed: ReadonlyMap<string, readonly Rule[]>,
    listenerArns: ReadonlyMap<number, string>,
    tgArns: ReadonlyMap<string, string>,
  ): Promise<void> {
    const firstPort = (u.mr.spec.listeners ?? [])[0]?.port;
    for (const [port, larn] of listenerArns) {
      const wantRules = (u.mr.spec.rules ?? []).filter((r) => (r.listenerPort ?? firstPort) === port);
      const plan = listenerRulePlan(wantRules, observed.get(larn) ?? [], tgArns);
      for (const b of plan.batches) await this.sendRules(u, larn, port, b);
    }
  }

  /** The update step that deletes the listeners `sync` found on ports the spec no longer has. */
  async deleteUnwanted(u: IngressUpdate, unwanted: readonly ChildChange<number, Listener>[]): Promise<void> {
    for (const { key: port, value: l } of unwanted) {
      const larn = l.ListenerArn ?? '';
      await elbv2Call(`delete listener ${port}`, () =>
        this.d.elbv2.send(new DeleteListenerCommand({ ListenerArn: larn })),
      );
      u.applied.listenerDeleted(larn);
      u.done.push(`listener ${port} deleted`);
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
   * Adds the SNI certificates `want` holds that `have` lacks, and removes those it does not hold,
   * as `sniPlan` orders them (one certificate per call, within AWS's quota at every moment), on
   * the listener of `port`. Throws TerminalError, sending nothing, when `want` holds more than the
   * quota.
   */
  private async syncSni(
    u: IngressUpdate,
    larn: string,
    port: number,
    want: readonly string[],
    have: readonly string[],
  ): Promise<void> {
    const r = sniPlan(have, want);
    if (!r.ok)
      throw new TerminalError(
        `listener ${port}: SNI certificates: ${r.error.message} (AWS’s default quota of certificates per load balancer, the default certificate not counted): use fewer additionalCertificateArns or certificateHosts`,
      );
    let added = 0;
    let removed = 0;
    for (const b of r.plan.batches) {
      const Certificates = b.children.map((c) => ({ CertificateArn: c.value }));
      if (b.op === 'create') {
        await elbv2Call(`add certificates to listener ${port}`, () =>
          this.d.elbv2.send(new AddListenerCertificatesCommand({ ListenerArn: larn, Certificates })),
        );
        added += Certificates.length;
      } else {
        await elbv2Call(`remove certificates from listener ${port}`, () =>
          this.d.elbv2.send(new RemoveListenerCertificatesCommand({ ListenerArn: larn, Certificates })),
        );
        removed += Certificates.length;
      }
    }
    if (added > 0) u.done.push(`listener ${port}: ${added} SNI certificate${added === 1 ? '' : 's'} added`);
    if (removed > 0)
      u.done.push(`listener ${port}: ${removed} SNI certificate${removed === 1 ? '' : 's'} removed`);
  }

  /**
   * Creates the listener `wanted` (wantedListener; without SDK retries), then adds its SNI
   * certificates; its ARN ('' if AWS gave none).
   */
  private async create(u: IngressUpdate, wanted: Listener): Promise<string> {
    const port = wanted.Port ?? 0;
    const certs = defaultCertificateOf(wanted);
    // Without SDK retries (as every create): a listener whose answer was lost is found by the
    // next observe instead of being created twice.
    const out = await elbv2Call(`create listener ${port}`, () =>
      this.d.elbv2Create.send(
        new CreateListenerCommand({
          LoadBalancerArn: u.arn,
          Port: port,
          Protocol: wanted.Protocol,
          DefaultActions: wanted.DefaultActions,
          ...(certs !== undefined ? { Certificates: certs } : {}),
          ...(wanted.SslPolicy !== undefined ? { SslPolicy: wanted.SslPolicy } : {}),
          Tags: ownedTagList(u.mr.spec.tags, u.ctx.ownership),
        }),
      ),
    );
    const larn = out.Listeners?.[0]?.ListenerArn ?? '';
    // A lost answer leaves them to the next look, which finds the listener without them.
    const sni = sniCertificates(wanted);
    if (larn !== '' && sni.length > 0) await this.syncSni(u, larn, port, sni, []);
    // Without an ARN it is not remembered: the next look, finding it missing, describes it.
    if (larn !== '') u.applied.listener({ ...wanted, ListenerArn: larn, LoadBalancerArn: u.arn });
    u.done.push(`listener ${port} created`);
    return larn;
  }

  /**
   * Brings listener `l` (as observed) to `wanted` (wantedListener): ModifyListener when what it
   * sets differs, then the SNI certificates.
   */
  private async update(u: IngressUpdate, l: Listener, wanted: Listener): Promise<void> {
    const larn = l.ListenerArn ?? '';
    const port = wanted.Port ?? 0;
    let sni = sniCertificates(l);
    if (!listenerBaseMatches(l, listenerSettings(wanted))) {
      const certs = defaultCertificateOf(wanted);
      await elbv2Call(`modify listener ${port}`, () =>
        this.d.elbv2.send(
          new ModifyListenerCommand({
            ListenerArn: larn,
            Protocol: wanted.Protocol,
            DefaultActions: wanted.DefaultActions,
            ...(certs !== undefined ? { Certificates: certs } : {}),
            ...(wanted.SslPolicy !== undefined ? { SslPolicy: wanted.SslPolicy } : {}),
          }),
        ),
      );
      u.done.push(`listener ${port} modified`);
      // What the modify left of the SNI certificates (AWS keeps them; an emulator may not).
      sni =
        wanted.Protocol === 'HTTPS' ? sniCertificates({ Certificates: await this.certificatesOf(larn) }) : [];
    }
    await this.syncSni(u, larn, port, sniCertificates(wanted), sni);
    // What is there now: no certificate when the listener no longer asks for one.
    u.applied.listener({ ...l, Certificates: undefined, ...wanted });
  }

  /** Sends one batch of `listenerRulePlan` for listener `larn` (creates without SDK retries). */
  private async sendRules(
    u: IngressUpdate,
    larn: string,
    port: number,
    b: ChildBatch<number, Rule>,
  ): Promise<void> {
    switch (b.op) {
      case 'delete':
        for (const { key, value: r } of b.children) {
          const rarn = r.RuleArn ?? '';
          await elbv2Call(`delete rule ${key}`, () =>
            this.d.elbv2.send(new DeleteRuleCommand({ RuleArn: rarn })),
          );
          u.applied.ruleDeleted(larn, rarn);
          u.done.push(`rule ${key} deleted`);
        }
        return;
      case 'update':
        for (const { key, value: w, from: r } of b.children) {
          const rarn = r.RuleArn ?? '';
          await elbv2Call(`modify rule ${key}`, () =>
            this.d.elbv2.send(
              new ModifyRuleCommand({ RuleArn: rarn, Conditions: w.Conditions, Actions: w.Actions }),
            ),
          );
          u.applied.rule(larn, { ...r, Conditions: w.Conditions, Actions: w.Actions });
          u.done.push(`rule ${key} modified`);
        }
        await this.retagRules(
          u,
          port,
          b.children.map(({ key, from: r }) => ({ key, arn: r.RuleArn ?? '' })),
        );
        return;
      case 'create':
        for (const { key, value: w } of b.children) {
          const out = await elbv2Call(`create rule ${key}`, () =>
            this.d.elbv2Create.send(
              new CreateRuleCommand({
                ListenerArn: larn,
                Priority: key,
                Conditions: w.Conditions,
                Actions: w.Actions,
                Tags: [
                  ...ownedTagList(u.mr.spec.tags, u.ctx.ownership),
                  ...childTagList(u.ctx, `${port}/${key}`),
                ],
              }),
            ),
          );
          const rarn = out.Rules?.[0]?.RuleArn;
          if (rarn !== undefined) u.applied.rule(larn, { ...w, RuleArn: rarn, IsDefault: false });
          u.done.push(`rule ${key} created`);
        }
    }
  }

  /**
   * A shared load balancer's rules are keyed by priority: a modified rule may now carry another
   * member's conditions and actions (a member joined before it, or one before it left). Its child
   * tags (skylift.dev/member) follow: read (DescribeTags, 20 a call) and rewritten (AddTags) only
   * where they differ. A MyIngress's own rules have no child tags: nothing is asked.
   */
  private async retagRules(
    u: IngressUpdate,
    port: number,
    rules: readonly { readonly key: number; readonly arn: string }[],
  ): Promise<void> {
    const wanted = rules
      .map((r) => ({ arn: r.arn, tags: childTagList(u.ctx, `${port}/${r.key}`), key: r.key }))
      .filter((r) => r.arn !== '' && r.tags.length > 0);
    for (let i = 0; i < wanted.length; i += 20) {
      const batch = wanted.slice(i, i + 20);
      const out = await elbv2Call(`describe tags of rules on listener ${port}`, () =>
        this.d.elbv2.send(new DescribeTagsCommand({ ResourceArns: batch.map((r) => r.arn) })),
      );
      const current = new Map((out.TagDescriptions ?? []).map((d) => [d.ResourceArn ?? '', d.Tags ?? []]));
      for (const r of batch) {
        const has = current.get(r.arn) ?? [];
        if (r.tags.every((t) => has.some((h) => h.Key === t.Key && h.Value === t.Value))) continue;
        await elbv2Call(`tag rule ${r.key}`, () =>
          this.d.elbv2.send(new AddTagsCommand({ ResourceArns: [r.arn], Tags: r.tags })),
        );
        u.done.push(`rule ${r.key} attributed anew`);
      }
    }
  }
}

/** A wanted listener's default certificate as CreateListener and ModifyListener take it, if it has one. Pure. */
function defaultCertificateOf(wanted: Listener): { CertificateArn: string }[] | undefined {
  const arn = defaultCertificate(wanted);
  return arn !== undefined ? [{ CertificateArn: arn }] : undefined;
}
