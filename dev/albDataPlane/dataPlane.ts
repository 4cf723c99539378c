// The ALB data plane of the local stack: follows the ELBv2 configuration in the emulator and
// serves each load balancer's HTTP and HTTPS listeners on loopback, routing requests as an ALB does.
// Tooling only (dev/), never part of the image. docs/development.md, "The ALB data plane".
import { ACMClient, DescribeCertificateCommand } from '@aws-sdk/client-acm';
import {
  DescribeListenerCertificatesCommand,
  DescribeListenersCommand,
  DescribeLoadBalancersCommand,
  DescribeRulesCommand,
  DescribeTargetGroupAttributesCommand,
  DescribeTargetGroupsCommand,
  DescribeTargetHealthCommand,
  ElasticLoadBalancingV2Client,
  type Certificate,
  type Listener,
  type LoadBalancer,
  type Rule,
  type TargetGroup,
} from '@aws-sdk/client-elastic-load-balancing-v2';
import {
  createServer,
  request as httpRequest,
  type IncomingMessage,
  type OutgoingHttpHeaders,
  type Server,
  type ServerResponse,
} from 'node:http';
import {
  connect as http2Connect,
  createSecureServer,
  Http2ServerRequest,
  Http2ServerResponse,
  type Http2SecureServer,
  type IncomingHttpHeaders as Http2Headers,
  type OutgoingHttpHeaders as Http2OutgoingHeaders,
} from 'node:http2';
import type { AddressInfo, Socket } from 'node:net';
import { DescribeSecurityGroupsCommand, EC2Client, type SecurityGroup } from '@aws-sdk/client-ec2';
import { admissionFor, admits, sameAdmission, type Admission } from './securityGroups.ts';
import { realClock, type Clock, type TimerHandle } from '../../src/runtime/clock.ts';
import type { FaultRule } from '../awsFaultProxy.ts';
import type { AwsCall } from '../awsOperation.ts';
import { awsClientConfig, emulatorCredentials } from '../emulator.ts';
import { describeTargetHealthRule, type MeasuredTarget } from './describeTargetHealth.ts';
import { HealthMonitor, matcherAccepts, type CheckOutcome, type HealthCheckSettings } from './health.ts';
import {
  chooseWeighted,
  hostWithoutPort,
  renderRedirect,
  ruleOf,
  selectRule,
  type Action,
  type ListenerRule,
  type RequestFacts,
} from './rules.ts';
import {
  CertificateSource,
  KeyMaterialStore,
  LocalCa,
  certificateForServerName,
  importCertificateRule,
  importCertificateTap,
  secureContextOptions,
  type AcmDescription,
  type ServedCertificate,
} from './tls.ts';

/**
 * How long a deregistered target keeps getting new requests: an ALB's nodes learn of a
 * deregistration asynchronously. AWS documents no figure; 5 s is an estimate, not a measurement.
 */
export const DEFAULT_PROPAGATION_DELAY_MS = 5_000;
/** `deregistration_delay.timeout_seconds` when the target group does not say (AWS default 300 s). */
export const DEFAULT_DEREGISTRATION_DELAY_S = 300;
/** Pages read per Describe call and sync, so a sync is bounded however much the emulator holds. */
const MAX_PAGES = 20;
/** How long a proxied request may wait for its target (an ALB's default idle timeout, 60 s). */
const UPSTREAM_TIMEOUT_MS = 60_000;
/** Target group attributes are re-read every this many syncs (they rarely change). */
const ATTRIBUTE_REFRESH_SYNCS = 10;

/** An account the data plane follows in the emulator. */
export interface AccountCredentials {
  readonly accessKeyId: string;
  readonly secretAccessKey: string;
}

/** Options for {@link AlbDataPlane.start}. */
export interface AlbDataPlaneOptions {
  /** The emulator's endpoint (moto itself, not the fault proxy: the data plane's calls are not the operator's). */
  readonly endpoint: string;
  /** Accounts to follow (default: the emulator's plain credentials, i.e. its default account). */
  readonly accounts?: readonly AccountCredentials[];
  /** Pause between syncs with the emulator (default 500 ms). */
  readonly pollMs?: number;
  /** See {@link DEFAULT_PROPAGATION_DELAY_MS}; tests set it short. */
  readonly propagationDelayMs?: number;
  /** Multiplies health check intervals and timeouts (default 1; tests use e.g. 0.1 for 0.5 s checks). */
  readonly healthCheckTimeScale?: number;
  /** Random source in [0,1) for weighted forwarding. */
  readonly random?: () => number;
  /** Clock for health checks, propagation and draining (default the wall clock). */
  readonly clock?: Clock;
  /**
   * Where a target's traffic and health checks are sent, given its registered IP (default: that
   * IP). Only for an integration test whose Pods are played by loopback servers: Kubernetes refuses
   * loopback addresses in EndpointSlices, so those Pods carry addresses the test maps back here.
   */
  readonly dialAddress?: (ip: string) => string;
  /** Address the listeners bind to (default 127.0.0.1). */
  readonly host?: string;
  /** Where notable events go (a listener served, a rule skipped, a sync failing). */
  readonly log?: (line: string) => void;
  /**
   * Called after a sync that served a new listener or closed one, with every listener served
   * then ({@link AlbDataPlane.servedListeners}); not called for rule or target changes. Must not
   * throw (an exception is logged and ignored). E.g. the conformance runner rewrites its dial map.
   */
  readonly onListenersChanged?: (listeners: readonly ServedListener[]) => void;
}

/** Where a listener is served. */
export interface Endpoint {
  readonly host: string;
  readonly port: number;
}

/** A listener the data plane serves: which load balancer and port, and where it listens instead. */
export interface ServedListener {
  readonly loadBalancerArn: string;
  /** The load balancer's DNS name as ELBv2 reports it (resolves nowhere on the local stack). */
  readonly dnsName: string;
  /** The listener's port on the load balancer. */
  readonly port: number;
  readonly protocol: string;
  /** Where the data plane serves it. */
  readonly endpoint: Endpoint;
}

interface TargetEntry {
  readonly id: string;
  readonly port: number;
  readonly monitor: HealthMonitor;
  /** When the data plane saw it deregistered. */
  deregisteredAt?: number;
  /** Whether it was healthy when deregistered (only then does it keep getting requests a while). */
  wasHealthy?: boolean;
  drainTimer?: TimerHandle;
  /** Requests to it under way (HTTP/1 requests, HTTP/2 streams): cut when it is forgotten. */
  readonly inFlight: Set<{ destroy(): void }>;
}

interface GroupEntry {
  readonly arn: string;
  /** ProtocolVersion: `GRPC` targets are reached and health checked over HTTP/2 (h2c), others over HTTP/1.1. */
  protocolVersion: string;
  settings: HealthCheckSettings;
  deregistrationDelayS: number;
  attributesReadAtSync: number;
  readonly targets: Map<string, TargetEntry>;
  /** Round-robin position. */
  next: number;
  inUse: boolean;
}

/** An HTTPS listener's certificates as last read: its default, and every one that can be served. */
interface ListenerTls {
  readonly defaultArn: string | undefined;
  /** The default (when it can be served) and the SNI certificates, in the listener's order. */
  readonly certificates: readonly ServedCertificate[];
}

interface ListenerEntry {
  readonly key: string;
  readonly loadBalancerArn: string;
  readonly dnsName: string;
  readonly port: number;
  readonly protocol: string;
  rules: ListenerRule[];
  /** Who its load balancer's security groups let connect to this port. */
  admission: Admission;
  /** HTTPS only: what the SNI callback chooses from. */
  tls: ListenerTls | undefined;
  /** HTTPS only: the certificate clients that send no server name get (the server's own context). */
  servedDefault: ServedCertificate | undefined;
  readonly server: Server | Http2SecureServer;
  /** Its open client connections (closed with it: an HTTP/2 server cannot close them itself). */
  readonly sockets: Set<Socket>;
  readonly endpoint: Endpoint;
}

/** A request to a listener: HTTP/1.1, or HTTP/2 on an HTTPS listener (ALPN h2). */
type ListenerRequest = IncomingMessage | Http2ServerRequest;
/** Its response. */
type ListenerResponse = ServerResponse | Http2ServerResponse;

const listenerKey = (lbArn: string, port: number): string => `${lbArn}|${port}`;
const targetKey = (id: string, port: number): string => `${id}:${port}`;

/**
 * Serves every application load balancer in the emulator: one loopback port per (load balancer,
 * HTTP or HTTPS listener), rules evaluated as an ALB does, requests proxied to registered targets
 * that the data plane's own health checks find healthy, deregistered targets drained. An HTTPS
 * listener terminates TLS with the certificate its SNI chooses (see dev/albDataPlane/tls.ts),
 * speaks HTTP/2 (ALPN h2) or HTTP/1.1 to clients, and then routes as an HTTP one. Targets are
 * reached over plain HTTP/1.1, those of a target group of protocol version GRPC over cleartext
 * HTTP/2 (h2c; an ALB speaks HTTP/2 over TLS to them — the local plane does not encrypt); a gRPC
 * target group takes HTTP/2 requests only (others answer 464, as an ALB's). Follows the emulator by
 * polling (DescribeLoadBalancers, Listeners, ListenerCertificates, Rules, TargetGroups,
 * TargetHealth, and ACM's DescribeCertificate every `pollMs`). Not safe to share between tests
 * that reset the emulator under it; `stop()` is idempotent.
 */
export class AlbDataPlane {
  private readonly opts: Required<Omit<AlbDataPlaneOptions, 'accounts' | 'log' | 'onListenersChanged'>> & {
    log: (line: string) => void;
    onListenersChanged: AlbDataPlaneOptions['onListenersChanged'];
  };
  private readonly clients: ElasticLoadBalancingV2Client[];
  /** EC2 per account, same order as `clients`: the load balancers' security groups. */
  private readonly ec2: EC2Client[];
  /** ACM per account, same order as `clients`: the listeners' certificates. */
  private readonly acm: ACMClient[];
  /** Keys of imported certificates, recorded by {@link importCertificateRule}. */
  private readonly keyMaterial = new KeyMaterialStore();
  private readonly certificates: CertificateSource;
  /**
   * The PEM of the CA that signs the data plane's stand-ins for ACM-issued certificates (those
   * made by RequestCertificate, whose keys ACM never gives out): trust it to verify them.
   */
  readonly localCaPem: string;
  private readonly listeners = new Map<string, ListenerEntry>();
  private readonly groups = new Map<string, GroupEntry>();
  private syncs = 0;
  private stopped = false;
  private pollTimer: TimerHandle | undefined;
  private syncing: Promise<void> | undefined;
  private readonly syncWaiters: (() => void)[] = [];
  /** The listener keys last reported to `onListenersChanged`, sorted and joined. */
  private reportedListeners = '';

  private constructor(opts: AlbDataPlaneOptions, ca: LocalCa) {
    this.opts = {
      endpoint: opts.endpoint,
      pollMs: opts.pollMs ?? 500,
      propagationDelayMs: opts.propagationDelayMs ?? DEFAULT_PROPAGATION_DELAY_MS,
      healthCheckTimeScale: opts.healthCheckTimeScale ?? 1,
      random: opts.random ?? Math.random,
      clock: opts.clock ?? realClock,
      host: opts.host ?? '127.0.0.1',
      dialAddress: opts.dialAddress ?? ((ip) => ip),
      log: opts.log ?? (() => undefined),
      onListenersChanged: opts.onListenersChanged,
    };
    const accounts = opts.accounts ?? [emulatorCredentials];
    const config = (a: AccountCredentials) => ({
      ...awsClientConfig(opts.endpoint),
      credentials: { accessKeyId: a.accessKeyId, secretAccessKey: a.secretAccessKey },
    });
    this.clients = accounts.map((a) => new ElasticLoadBalancingV2Client(config(a)));
    this.ec2 = accounts.map((a) => new EC2Client(config(a)));
    this.acm = accounts.map((a) => new ACMClient(config(a)));
    this.localCaPem = ca.pem;
    this.certificates = new CertificateSource(this.keyMaterial, ca, this.opts.log);
  }

  /** Starts following the emulator; resolves after the first sync (listeners of existing load balancers served). */
  static async start(opts: AlbDataPlaneOptions): Promise<AlbDataPlane> {
    const dp = new AlbDataPlane(opts, await LocalCa.create());
    await dp.syncOnce();
    dp.schedule();
    return dp;
  }

  /** Where a load balancer's listener on `listenerPort` is served; undefined until a sync has seen it. */
  endpointOf(loadBalancerArn: string, listenerPort: number): Endpoint | undefined {
    return this.listeners.get(listenerKey(loadBalancerArn, listenerPort))?.endpoint;
  }

  /** Every listener served now, in load balancer ARN and port order. */
  servedListeners(): ServedListener[] {
    return [...this.listeners.values()]
      .map((l) => ({
        loadBalancerArn: l.loadBalancerArn,
        dnsName: l.dnsName,
        port: l.port,
        protocol: l.protocol,
        endpoint: l.endpoint,
      }))
      .sort((a, b) => a.loadBalancerArn.localeCompare(b.loadBalancerArn) || a.port - b.port);
  }

  /** The targets of a target group as measured (registered and draining); undefined for a group not seen. */
  targetHealth(targetGroupArn: string): MeasuredTarget[] | undefined {
    const g = this.groups.get(targetGroupArn);
    if (g === undefined) return undefined;
    return [...g.targets.values()].map((t) => {
      const rec = t.monitor.record;
      if (!g.inUse && rec.state !== 'draining')
        return {
          id: t.id,
          port: t.port,
          state: 'unused',
          reason: 'Target.NotInUse',
          description: 'Target group is not configured to receive traffic from the load balancer',
        };
      return {
        id: t.id,
        port: t.port,
        state: rec.state,
        ...(rec.reason !== undefined ? { reason: rec.reason } : {}),
        ...(rec.description !== undefined ? { description: rec.description } : {}),
      };
    });
  }

  /** A fault-proxy rule that makes DescribeTargetHealth report {@link targetHealth}; install it on the operator's proxy. */
  describeTargetHealthRule(): FaultRule {
    return describeTargetHealthRule((arn) => this.targetHealth(arn));
  }

  /**
   * A fault-proxy rule that records the certificate and private key of every ImportCertificate
   * (a re-import under the same ARN replaces them), so HTTPS listeners can serve imported
   * certificates; install it on the proxy the certificates are imported through, before they are.
   */
  importCertificateRule(): FaultRule {
    return importCertificateRule(this.keyMaterial);
  }

  /**
   * A fault-proxy tap (AwsFaultProxy.tap) recording the certificate and key of every successful
   * ImportCertificate, whichever proxy rule answered it; install it on the proxy the certificates
   * are imported through, before they are.
   */
  importCertificateTap(): (call: AwsCall, status: number, body: string) => void {
    return importCertificateTap(this.keyMaterial);
  }

  /** Resolves once a sync that started after this call has finished (tests: "the data plane has seen my change"). */
  async synced(): Promise<void> {
    await new Promise<void>((resolveSync) => {
      this.syncWaiters.push(resolveSync);
    });
  }

  /** Stops polling, health checks and listeners; in-flight requests are cut. Idempotent. */
  async stop(): Promise<void> {
    if (this.stopped) return;
    this.stopped = true;
    this.pollTimer?.cancel();
    await this.syncing?.catch(() => undefined);
    for (const g of this.groups.values())
      for (const t of g.targets.values()) {
        t.monitor.stop();
        t.drainTimer?.cancel();
        for (const r of t.inFlight) r.destroy();
      }
    await Promise.all([...this.listeners.values()].map((l) => closeServer(l)));
    this.listeners.clear();
    for (const c of this.clients) c.destroy();
    for (const c of this.ec2) c.destroy();
    for (const c of this.acm) c.destroy();
    for (const w of this.syncWaiters.splice(0)) w();
  }

  private schedule(): void {
    if (this.stopped) return;
    this.pollTimer = this.opts.clock.setTimer(this.opts.pollMs, () => {
      void this.syncOnce().finally(() => {
        this.schedule();
      });
    });
  }

  private async syncOnce(): Promise<void> {
    const waiters = this.syncWaiters.splice(0);
    this.syncing = this.sync().catch((err: unknown) => {
      this.opts.log(`alb data plane: sync failed: ${err instanceof Error ? err.message : String(err)}`);
    });
    await this.syncing;
    this.reportListeners();
    for (const w of waiters) w();
  }

  /** Calls `onListenersChanged` when the set of served listeners differs from the last one reported. */
  private reportListeners(): void {
    const notify = this.opts.onListenersChanged;
    if (notify === undefined || this.stopped) return;
    const now = [...this.listeners.values()]
      .map((l) => `${l.key}|${l.protocol}`)
      .sort()
      .join('\n');
    if (now === this.reportedListeners) return;
    this.reportedListeners = now;
    try {
      notify(this.servedListeners());
    } catch (err) {
      this.opts.log(
        `alb data plane: onListenersChanged failed: ${err instanceof Error ? err.message : String(err)}`,
      );
    }
  }

  private async sync(): Promise<void> {
    this.syncs++;
    const seenListeners = new Set<string>();
    const seenGroups = new Set<string>();
    const usedGroups = new Set<string>();
    const namedCertificates = new Set<string>();
    for (const [i, client] of this.clients.entries()) {
      const ec2 = this.ec2[i] as EC2Client;
      const acm = this.acm[i] as ACMClient;
      let groups: SecurityGroup[] | undefined;
      const lbs = await pages<LoadBalancer>(async (marker) => {
        const o = await client.send(
          new DescribeLoadBalancersCommand({ ...(marker ? { Marker: marker } : {}) }),
        );
        return { items: o.LoadBalancers ?? [], next: o.NextMarker };
      });
      for (const lb of lbs) {
        if (lb.Type !== undefined && lb.Type !== 'application') continue;
        const lbArn = lb.LoadBalancerArn ?? '';
        const listeners = await pages<Listener>(async (marker) => {
          const o = await client.send(
            new DescribeListenersCommand({ LoadBalancerArn: lbArn, ...(marker ? { Marker: marker } : {}) }),
          );
          return { items: o.Listeners ?? [], next: o.NextMarker };
        });
        for (const l of listeners) {
          if ((l.Protocol !== 'HTTP' && l.Protocol !== 'HTTPS') || l.Port === undefined) continue;
          const rules = await pages<Rule>(async (marker) => {
            const o = await client.send(
              new DescribeRulesCommand({
                ListenerArn: l.ListenerArn ?? '',
                ...(marker ? { Marker: marker } : {}),
              }),
            );
            return { items: o.Rules ?? [], next: o.NextMarker };
          });
          const modelled: ListenerRule[] = [];
          for (const r of rules) {
            const m = ruleOf(r);
            if (m === undefined)
              this.opts.log(`alb data plane: rule ${r.RuleArn ?? '?'} not modelled, skipped`);
            else modelled.push(m);
          }
          for (const r of modelled)
            if (r.action.type === 'forward') for (const g of r.action.targetGroups) usedGroups.add(g.arn);
          const key = listenerKey(lbArn, l.Port);
          seenListeners.add(key);
          const lbGroups = lb.SecurityGroups ?? [];
          // The account's groups, read once per sync and only when a load balancer has any.
          if (lbGroups.length > 0 && groups === undefined)
            groups = await pages<SecurityGroup>(async (token) => {
              const o = await ec2.send(
                new DescribeSecurityGroupsCommand({ ...(token ? { NextToken: token } : {}) }),
              );
              return { items: o.SecurityGroups ?? [], next: o.NextToken };
            });
          const admission = admissionFor(lbGroups, groups ?? [], l.Port);
          const tls = l.Protocol === 'HTTPS' ? await this.listenerTls(client, acm, l) : undefined;
          for (const c of tls?.named ?? []) namedCertificates.add(c);
          await this.serveListener(
            key,
            lbArn,
            lb.DNSName ?? '',
            l.Port,
            l.Protocol,
            modelled,
            admission,
            tls?.tls,
          );
        }
      }
      const tgs = await pages<TargetGroup>(async (marker) => {
        const o = await client.send(
          new DescribeTargetGroupsCommand({ ...(marker ? { Marker: marker } : {}) }),
        );
        return { items: o.TargetGroups ?? [], next: o.NextMarker };
      });
      for (const tg of tgs) {
        const arn = tg.TargetGroupArn ?? '';
        seenGroups.add(arn);
        await this.syncGroup(client, tg, usedGroups.has(arn));
      }
    }
    this.certificates.retain(namedCertificates);
    for (const [key, l] of this.listeners)
      if (!seenListeners.has(key)) {
        this.listeners.delete(key);
        await closeServer(l);
        this.opts.log(`alb data plane: listener ${key} gone, closed ${l.endpoint.host}:${l.endpoint.port}`);
      }
    for (const [arn, g] of this.groups)
      if (!seenGroups.has(arn)) {
        for (const t of g.targets.values()) this.drain(g, t);
        this.groups.delete(arn);
      }
  }

  private async serveListener(
    key: string,
    loadBalancerArn: string,
    dnsName: string,
    port: number,
    protocol: string,
    rules: ListenerRule[],
    admission: Admission,
    tls: ListenerTls | undefined,
  ): Promise<void> {
    const existing = this.listeners.get(key);
    if (existing !== undefined && existing.protocol !== protocol) {
      // A listener changed between HTTP and HTTPS: served anew, on a new port.
      this.listeners.delete(key);
      await closeServer(existing);
      this.opts.log(
        `alb data plane: listener ${key} is ${protocol} now, closed ${existing.endpoint.host}:${existing.endpoint.port}`,
      );
    } else if (existing !== undefined) {
      existing.rules = rules;
      if (!sameAdmission(existing.admission, admission))
        this.opts.log(`alb data plane: listener ${key} admits ${describeAdmission(admission)}`);
      existing.admission = admission;
      existing.tls = tls;
      this.serveDefaultCertificate(existing);
      return;
    }
    const server =
      protocol === 'HTTPS'
        ? // A client's server name chooses the certificate (no server name: the server's own
          // context, the listener's default, set by serveDefaultCertificate); read at each handshake,
          // so certificate changes apply to the next connection without restarting the listener.
          createSecureServer({
            allowHTTP1: true,
            SNICallback: (serverName, done) => {
              const served = certificateFor(this.listeners.get(key), serverName);
              if (served !== undefined) done(null, served.context);
              else done(new Error(`no certificate for ${serverName}`));
            },
          })
        : createServer();
    await new Promise<void>((resolveListen, reject) => {
      server.once('error', reject);
      server.listen(0, this.opts.host, () => {
        resolveListen();
      });
    });
    const endpoint = { host: this.opts.host, port: (server.address() as AddressInfo).port };
    const sockets = new Set<Socket>();
    const served: ListenerEntry = {
      key,
      loadBalancerArn,
      dnsName,
      port,
      protocol,
      rules,
      admission,
      tls,
      servedDefault: undefined,
      server,
      sockets,
      endpoint,
    };
    this.serveDefaultCertificate(served);
    // A client the security groups do not let in never gets a connection: AWS drops its SYN; here
    // the accepted socket is closed at once, so the client sees the connection fail.
    server.on('connection', (socket: Socket) => {
      if (!admits(served.admission, socket.remoteAddress ?? '')) {
        socket.destroy();
        return;
      }
      sockets.add(socket);
      socket.on('close', () => sockets.delete(socket));
    });
    server.on('request', (req: ListenerRequest, res: ListenerResponse) => {
      this.handle(served, req, res);
    });
    this.listeners.set(key, served);
    this.opts.log(
      `alb data plane: ${protocol} listener ${port} of ${loadBalancerArn} on ${endpoint.host}:${endpoint.port}, admitting ${describeAdmission(admission)}`,
    );
  }

  /**
   * An HTTPS listener's certificates: its default (DescribeListeners' `Certificates`) and those
   * DescribeListenerCertificates lists, each described by ACM and resolved to something servable.
   * Also every ARN the listener names, servable or not.
   */
  private async listenerTls(
    client: ElasticLoadBalancingV2Client,
    acm: ACMClient,
    l: Listener,
  ): Promise<{ tls: ListenerTls; named: string[] }> {
    const defaultArn = l.Certificates?.[0]?.CertificateArn;
    const listed = await pages<Certificate>(async (marker) => {
      const o = await client.send(
        new DescribeListenerCertificatesCommand({
          ListenerArn: l.ListenerArn ?? '',
          ...(marker ? { Marker: marker } : {}),
        }),
      );
      return { items: o.Certificates ?? [], next: o.NextMarker };
    });
    const named = [
      ...new Set(
        [defaultArn, ...listed.map((c) => c.CertificateArn)].filter(
          (a): a is string => a !== undefined && a !== '',
        ),
      ),
    ];
    const certificates: ServedCertificate[] = [];
    for (const arn of named) {
      const served = await this.certificates.resolve(arn, await describeCertificate(acm, arn));
      if (served !== undefined) certificates.push(served);
    }
    return { tls: { defaultArn, certificates }, named };
  }

  /**
   * Makes an HTTPS listener's default certificate the one served to clients that send no server
   * name, when it changed. A default that cannot be served leaves the last one in place (logged).
   */
  private serveDefaultCertificate(l: ListenerEntry): void {
    if (l.tls === undefined || !('setSecureContext' in l.server)) return;
    const def = l.tls.certificates.find((c) => c.arn === l.tls?.defaultArn);
    if (def === undefined || def === l.servedDefault) return;
    l.server.setSecureContext(secureContextOptions(def.material));
    l.servedDefault = def;
    this.opts.log(`alb data plane: listener ${l.key} default certificate ${def.arn}`);
  }

  private async syncGroup(
    client: ElasticLoadBalancingV2Client,
    tg: TargetGroup,
    inUse: boolean,
  ): Promise<void> {
    const arn = tg.TargetGroupArn ?? '';
    const settings = this.settingsOf(tg);
    let g = this.groups.get(arn);
    if (g === undefined) {
      g = {
        arn,
        protocolVersion: tg.ProtocolVersion ?? 'HTTP1',
        settings,
        deregistrationDelayS: DEFAULT_DEREGISTRATION_DELAY_S,
        attributesReadAtSync: -Infinity,
        targets: new Map(),
        next: 0,
        inUse,
      };
      this.groups.set(arn, g);
    }
    g.settings = settings;
    g.inUse = inUse;
    if (this.syncs - g.attributesReadAtSync >= ATTRIBUTE_REFRESH_SYNCS) {
      const attrs = await client.send(new DescribeTargetGroupAttributesCommand({ TargetGroupArn: arn }));
      const delay = attrs.Attributes?.find((a) => a.Key === 'deregistration_delay.timeout_seconds')?.Value;
      g.deregistrationDelayS = delay !== undefined ? Number(delay) : DEFAULT_DEREGISTRATION_DELAY_S;
      g.attributesReadAtSync = this.syncs;
    }
    const health = await client.send(new DescribeTargetHealthCommand({ TargetGroupArn: arn }));
    const registered = new Set<string>();
    for (const d of health.TargetHealthDescriptions ?? []) {
      const state = d.TargetHealth?.State;
      if (state === 'unused' || state === 'draining' || d.Target?.Id === undefined) continue;
      const port = d.Target.Port ?? tg.Port ?? 80;
      const key = targetKey(d.Target.Id, port);
      registered.add(key);
      const t = g.targets.get(key);
      if (t !== undefined && t.deregisteredAt === undefined) {
        t.monitor.update(g.settings);
        if (inUse) t.monitor.start();
        continue;
      }
      if (t !== undefined) this.forget(g, t); // registered again while draining: a new registration
      this.register(g, d.Target.Id, port, inUse);
    }
    for (const t of g.targets.values()) if (!registered.has(targetKey(t.id, t.port))) this.drain(g, t);
  }

  private settingsOf(tg: TargetGroup): HealthCheckSettings {
    const scale = this.opts.healthCheckTimeScale;
    return {
      intervalMs: (tg.HealthCheckIntervalSeconds ?? 30) * 1000 * scale,
      timeoutMs: (tg.HealthCheckTimeoutSeconds ?? 5) * 1000 * scale,
      healthy: tg.HealthyThresholdCount ?? 5,
      unhealthy: tg.UnhealthyThresholdCount ?? 2,
      path: tg.HealthCheckPath ?? '/',
      port: tg.HealthCheckPort ?? 'traffic-port',
      matcher: tg.Matcher?.GrpcCode ?? tg.Matcher?.HttpCode ?? '200',
      protocol: tg.HealthCheckProtocol ?? 'HTTP',
    };
  }

  private register(g: GroupEntry, id: string, port: number, inUse: boolean): void {
    const monitor = new HealthMonitor({
      clock: this.opts.clock,
      settings: g.settings,
      probe: (signal) => this.probe(g, id, port, signal),
      onChange: (rec) => {
        this.opts.log(
          `alb data plane: target ${id}:${port} of ${g.arn}: ${rec.state}${rec.reason ? ` (${rec.reason})` : ''}`,
        );
      },
    });
    g.targets.set(targetKey(id, port), { id, port, monitor, inFlight: new Set() });
    // AWS checks only targets of groups a listener rule names ("Target.NotInUse" otherwise).
    if (inUse) monitor.start();
  }

  /** Deregistered: new requests for the propagation delay, then none; cut after the deregistration delay. */
  private drain(g: GroupEntry, t: TargetEntry): void {
    if (t.deregisteredAt !== undefined) return;
    t.wasHealthy = t.monitor.record.state === 'healthy';
    t.deregisteredAt = this.opts.clock.now();
    t.monitor.drain();
    t.drainTimer = this.opts.clock.setTimer(g.deregistrationDelayS * 1000, () => {
      this.forget(g, t);
    });
  }

  private forget(g: GroupEntry, t: TargetEntry): void {
    t.monitor.stop();
    t.drainTimer?.cancel();
    for (const r of t.inFlight) r.destroy();
    g.targets.delete(targetKey(t.id, t.port));
  }

  private probe(g: GroupEntry, id: string, trafficPort: number, signal: AbortSignal): Promise<CheckOutcome> {
    const s = g.settings;
    const port = s.port === 'traffic-port' ? trafficPort : Number(s.port);
    return new Promise<CheckOutcome>((resolveProbe) => {
      if (s.protocol !== 'HTTP') {
        resolveProbe({
          ok: false,
          reason: 'Target.FailedHealthChecks',
          description: `${s.protocol} health checks are not modelled`,
        });
        return;
      }
      if (g.protocolVersion === 'GRPC') {
        grpcHealthCheck(this.opts.dialAddress(id), port, s, signal).then(resolveProbe, (err: unknown) => {
          resolveProbe({
            ok: false,
            reason: 'Target.FailedHealthChecks',
            description: `Health checks failed: ${err instanceof Error ? err.message : String(err)}`,
          });
        });
        return;
      }
      const req = httpRequest(
        {
          host: this.opts.dialAddress(id),
          port,
          path: s.path,
          method: 'GET',
          signal,
          headers: { 'user-agent': 'ELB-HealthChecker/2.0', connection: 'close' },
        },
        (res) => {
          res.resume();
          const status = res.statusCode ?? 0;
          resolveProbe(
            matcherAccepts(s.matcher, status)
              ? { ok: true }
              : {
                  ok: false,
                  reason: 'Target.ResponseCodeMismatch',
                  description: `Health checks failed with these codes: [${status}]`,
                },
          );
        },
      );
      req.on('error', (err) => {
        resolveProbe({
          ok: false,
          reason: 'Target.FailedHealthChecks',
          description: `Health checks failed: ${err.message}`,
        });
      });
      req.end();
    });
  }

  /** The targets a forward to `g` may use now: healthy ones (and recently deregistered healthy ones), else fail-open. */
  private routable(g: GroupEntry): TargetEntry[] {
    const now = this.opts.clock.now();
    const all = [...g.targets.values()];
    const healthy = all.filter((t) =>
      t.deregisteredAt === undefined
        ? t.monitor.record.state === 'healthy'
        : t.wasHealthy === true && now - t.deregisteredAt < this.opts.propagationDelayMs,
    );
    if (healthy.length > 0) return healthy;
    const registered = all.filter((t) => t.deregisteredAt === undefined);
    // Fail open: a group whose registered targets are all unhealthy routes to all of them.
    if (registered.length > 0 && registered.every((t) => t.monitor.record.state === 'unhealthy'))
      return registered;
    return [];
  }

  private handle(l: ListenerEntry, req: ListenerRequest, res: ListenerResponse): void {
    const url = req.url ?? '/';
    const q = url.indexOf('?');
    const facts: RequestFacts = {
      method: req.method ?? 'GET',
      host: requestHost(req),
      path: q < 0 ? url : url.slice(0, q),
      query: q < 0 ? '' : url.slice(q + 1),
      headers: req.headers,
      sourceIp: req.socket.remoteAddress ?? '',
    };
    const rule = selectRule(l.rules, facts);
    if (rule === undefined) {
      answer(res, 503, 'text/plain', 'no listener rule\n');
      return;
    }
    this.act(l, rule.action, facts, req, res);
  }

  private act(
    l: ListenerEntry,
    action: Action,
    facts: RequestFacts,
    req: ListenerRequest,
    res: ListenerResponse,
  ): void {
    switch (action.type) {
      case 'fixed-response':
        answer(res, action.statusCode, action.contentType ?? 'text/plain', action.body ?? '');
        return;
      case 'redirect': {
        const location = renderRedirect(action, {
          protocol: l.protocol,
          host: hostWithoutPort(facts.host),
          port: l.port,
          path: facts.path,
          query: facts.query,
        });
        writeHead(res, action.statusCode, { location, 'content-length': '0' });
        res.end();
        req.resume();
        return;
      }
      case 'forward': {
        const choice = chooseWeighted(action.targetGroups, this.opts.random);
        const g = choice !== undefined ? this.groups.get(choice.arn) : undefined;
        const targets = g !== undefined ? this.routable(g) : [];
        if (g === undefined || targets.length === 0) {
          answer(
            res,
            503,
            'text/html',
            '<html><body><h1>503 Service Temporarily Unavailable</h1></body></html>\n',
          );
          req.resume();
          return;
        }
        const t = targets[g.next++ % targets.length] as TargetEntry;
        if (g.protocolVersion !== 'GRPC') this.proxy(l, t, req, res);
        else if (req instanceof Http2ServerRequest && res instanceof Http2ServerResponse)
          this.proxyGrpc(l, t, req, res);
        else {
          // An ALB's answer to a request its target group's protocol version cannot take.
          answer(res, 464, 'text/plain', 'a gRPC target group takes HTTP/2 requests only\n');
          req.resume();
        }
        return;
      }
    }
  }

  private proxy(l: ListenerEntry, t: TargetEntry, req: ListenerRequest, res: ListenerResponse): void {
    // An HTTP/2 request goes to the target as HTTP/1.1: its :authority as Host, no pseudo-headers.
    const headers = { ...forwardedHeaders(l, req), host: requestHost(req) };
    const up = httpRequest(
      {
        host: this.opts.dialAddress(t.id),
        port: t.port,
        method: req.method,
        path: req.url,
        headers,
        timeout: UPSTREAM_TIMEOUT_MS,
      },
      (upRes) => {
        writeHead(res, upRes.statusCode ?? 502, upRes.headers);
        upRes.pipe(res);
      },
    );
    t.inFlight.add(up);
    up.on('close', () => t.inFlight.delete(up));
    up.on('timeout', () => {
      up.destroy();
      if (!res.headersSent)
        answer(res, 504, 'text/html', '<html><body><h1>504 Gateway Time-out</h1></body></html>\n');
    });
    up.on('error', () => {
      if (!res.headersSent)
        answer(res, 502, 'text/html', '<html><body><h1>502 Bad Gateway</h1></body></html>\n');
      else res.destroy();
    });
    res.on('close', () => {
      if (!up.writableFinished || !res.writableFinished) up.destroy();
    });
    req.pipe(up);
  }

  /**
   * A gRPC call (an HTTP/2 request) to a target of a GRPC target group, over cleartext HTTP/2 (h2c):
   * its headers forwarded, the answer's headers, body and trailers (grpc-status) passed back. A
   * target that cannot be reached answers 502, as an ALB's.
   */
  private proxyGrpc(
    l: ListenerEntry,
    t: TargetEntry,
    req: Http2ServerRequest,
    res: Http2ServerResponse,
  ): void {
    const session = http2Connect(`http://${this.opts.dialAddress(t.id)}:${t.port}`);
    const fail = (): void => {
      if (!res.headersSent)
        answer(res, 502, 'text/html', '<html><body><h1>502 Bad Gateway</h1></body></html>\n');
      else res.destroy();
      session.destroy();
    };
    session.on('error', fail);
    const up = session.request({
      ...forwardedHeaders(l, req),
      ':method': req.method,
      ':path': req.url,
      ':authority': requestHost(req),
      ':scheme': 'http',
    });
    const entry = { destroy: () => session.destroy() };
    t.inFlight.add(entry);
    up.setTimeout(UPSTREAM_TIMEOUT_MS, () => {
      up.close();
      if (!res.headersSent)
        answer(res, 504, 'text/html', '<html><body><h1>504 Gateway Time-out</h1></body></html>\n');
    });
    up.on('response', (h: Http2Headers) => {
      writeHead(res, Number(h[':status'] ?? 502), withoutPseudoHeaders(h));
    });
    up.on('data', (c: Buffer) => res.write(c));
    up.on('trailers', (h: Http2Headers) => {
      res.addTrailers(withoutPseudoHeaders(h));
    });
    up.on('end', () => res.end());
    up.on('close', () => {
      t.inFlight.delete(entry);
      session.close();
    });
    up.on('error', fail);
    res.on('close', () => {
      if (!res.writableFinished) up.close();
    });
    req.pipe(up);
  }
}

/** The Host a request names: HTTP/2's :authority, else the Host header. Pure. */
function requestHost(req: ListenerRequest): string {
  return req instanceof Http2ServerRequest ? req.authority : (req.headers.host ?? '');
}

/**
 * The headers a request goes to its target with: the client's, without HTTP/2 pseudo-headers and
 * hop-by-hop ones, with an ALB's X-Forwarded-For (appended), -Proto and -Port. Pure.
 */
function forwardedHeaders(l: ListenerEntry, req: ListenerRequest): Record<string, string | string[]> {
  const client = (req.socket.remoteAddress ?? '').replace(/^::ffff:/, '');
  const prior = req.headers['x-forwarded-for'];
  return {
    ...(withoutPseudoHeaders(req.headers) as Record<string, string | string[]>),
    'x-forwarded-for': prior !== undefined ? `${String(prior)}, ${client}` : client,
    'x-forwarded-proto': l.protocol.toLowerCase(),
    'x-forwarded-port': String(l.port),
  };
}

/** Headers that belong to one connection, which HTTP/2 forbids. */
const hopByHop = new Set([
  'connection',
  'keep-alive',
  'proxy-connection',
  'transfer-encoding',
  'upgrade',
  'host',
]);

/** Headers without HTTP/2 pseudo-headers (`:path`, …) and hop-by-hop ones. Pure. */
function withoutPseudoHeaders(h: Http2Headers | IncomingMessage['headers']): Http2OutgoingHeaders {
  const out: Http2OutgoingHeaders = {};
  for (const [k, v] of Object.entries(h))
    if (!k.startsWith(':') && !hopByHop.has(k) && v !== undefined) out[k] = v;
  return out;
}

/** Writes a response's status and headers, on HTTP/1.1 or (hop-by-hop headers left out) HTTP/2. */
function writeHead(res: ListenerResponse, status: number, headers: OutgoingHttpHeaders | Http2Headers): void {
  if (res instanceof Http2ServerResponse)
    res.writeHead(status, withoutPseudoHeaders(headers as Http2Headers));
  else res.writeHead(status, headers as OutgoingHttpHeaders);
}

/**
 * A gRPC target's health check: the call `s.path` (AWS's default `/AWS.ALB/healthcheck`) over
 * cleartext HTTP/2 with an empty message; healthy when its grpc-status (trailers, or the headers
 * of a trailers-only answer) is one of `s.matcher` (Matcher.GrpcCode, AWS's default 12).
 */
function grpcHealthCheck(
  host: string,
  port: number,
  s: HealthCheckSettings,
  signal: AbortSignal,
): Promise<CheckOutcome> {
  return new Promise((resolveCheck, reject) => {
    const session = http2Connect(`http://${host}:${port}`);
    const done = (outcome: CheckOutcome | Error): void => {
      session.destroy();
      if (outcome instanceof Error) reject(outcome);
      else resolveCheck(outcome);
    };
    signal.addEventListener('abort', () => done(new Error('timed out')));
    session.on('error', done);
    const call = session.request({
      ':method': 'POST',
      ':path': s.path,
      'content-type': 'application/grpc',
      te: 'trailers',
      'user-agent': 'ELB-HealthChecker/2.0',
    });
    let status: string | undefined;
    const read = (h: Http2Headers): void => {
      const v = h['grpc-status'];
      if (v !== undefined) status = String(v);
    };
    call.on('response', read);
    call.on('trailers', read);
    call.on('error', done);
    call.resume();
    call.on('close', () => {
      if (status === undefined) {
        done({ ok: false, reason: 'Target.FailedHealthChecks', description: 'no grpc-status in the answer' });
        return;
      }
      done(
        matcherAccepts(s.matcher, Number(status))
          ? { ok: true }
          : {
              ok: false,
              reason: 'Target.ResponseCodeMismatch',
              description: `Health checks failed with these codes: [${status}]`,
            },
      );
    });
    // An empty message: not compressed, length 0.
    call.end(Buffer.alloc(5));
  });
}

/** The certificate an HTTPS listener serves to a client asking for `serverName`, if it has one to serve. */
function certificateFor(l: ListenerEntry | undefined, serverName: string): ServedCertificate | undefined {
  if (l?.tls === undefined) return undefined;
  const arn = certificateForServerName(serverName, l.tls.defaultArn, l.tls.certificates);
  return l.tls.certificates.find((c) => c.arn === arn);
}

/** ACM's description of a certificate; undefined when ACM does not know it. */
async function describeCertificate(acm: ACMClient, arn: string): Promise<AcmDescription | undefined> {
  try {
    const c = (await acm.send(new DescribeCertificateCommand({ CertificateArn: arn }))).Certificate;
    if (c === undefined) return undefined;
    const names = [c.DomainName ?? '', ...(c.SubjectAlternativeNames ?? [])]
      .filter((n) => n !== '')
      .map((n) => n.toLowerCase());
    return { type: c.Type ?? '', status: c.Status ?? '', names: [...new Set(names)] };
  } catch (err) {
    if (err instanceof Error && err.name === 'ResourceNotFoundException') return undefined;
    throw err;
  }
}

function describeAdmission(a: Admission): string {
  return a.all ? 'everyone' : a.cidrs.length > 0 ? a.cidrs.join(', ') : 'no one';
}

function answer(res: ListenerResponse, status: number, contentType: string, body: string): void {
  if (res.headersSent) return;
  writeHead(res, status, { 'content-type': contentType, 'content-length': Buffer.byteLength(body) });
  res.end(body);
}

async function pages<T>(
  read: (marker: string | undefined) => Promise<{ items: T[]; next: string | undefined }>,
): Promise<T[]> {
  const out: T[] = [];
  let marker: string | undefined;
  for (let page = 0; page < MAX_PAGES; page++) {
    const { items, next } = await read(marker);
    out.push(...items);
    if (next === undefined || next === '') break;
    marker = next;
  }
  return out;
}

async function closeServer(l: ListenerEntry): Promise<void> {
  const server = l.server;
  if (!server.listening) return;
  for (const socket of l.sockets) socket.destroy();
  await new Promise<void>((resolveClose) => {
    server.close(() => {
      resolveClose();
    });
  });
}
