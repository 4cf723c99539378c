// TLS Secrets imported into ACM (src/providers/acm/imports.ts) against moto through the fault proxy,
// with the rules that make moto's ACM answer as AWS's (dev/acmFidelity.ts: ListCertificates, a
// re-import keeping the certificate's tags and refusing new ones, DeleteCertificate refused while a
// listener serves the certificate). Every certificate is under this run's own domain; each test
// has an owner of its own, so what one imports no other finds.
import { randomBytes, X509Certificate } from 'node:crypto';
import {
  ACMClient,
  AddTagsToCertificateCommand,
  DescribeCertificateCommand,
  ImportCertificateCommand,
  GetCertificateCommand,
  ListTagsForCertificateCommand,
} from '@aws-sdk/client-acm';
import { EC2Client } from '@aws-sdk/client-ec2';
import {
  CreateListenerCommand,
  CreateLoadBalancerCommand,
  DeleteListenerCommand,
  ElasticLoadBalancingV2Client,
} from '@aws-sdk/client-elastic-load-balancing-v2';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { acmDeleteInUseAsAws, acmListCertificatesAsAws, acmReimportAsAws } from '../../dev/acmFidelity.ts';
import type { AwsFaultProxy } from '../../dev/awsFaultProxy.ts';
import { errorResponse } from '../../dev/awsOperation.ts';
import { awsClientConfig } from '../../dev/emulator.ts';
import type { OwnershipTags } from '../../src/apis/managed.ts';
import { createAwsClients, type AwsClients } from '../../src/providers/aws/clients.ts';
import { CertificateInUseError } from '../../src/providers/acm/errors.ts';
import { importedCertificatesOf, type ImportedCertificates } from '../../src/providers/acm/imports.ts';
import { InvalidTlsSecretError } from '../../src/providers/acm/tlsSecret.ts';
import { realClock } from '../../src/runtime/clock.ts';
import { Metrics } from '../../src/runtime/metrics.ts';
import { importCertificate } from '../support/acmCertificates.ts';
import { counterValue } from '../support/gadgetController.ts';
import { stackInfo, startFaultProxy } from '../support/stack.ts';
import { makeCertificate, tlsSecret, type FixtureKey } from '../support/tlsFixtures.ts';
import { vpcWithTwoSubnets } from '../support/vpc.ts';

let proxy: AwsFaultProxy;
let acm: ACMClient;
let elb: ElasticLoadBalancingV2Client;
let subnets: string[];
const sets: AwsClients[] = [];
/** This run's own domain. */
const domain = `${randomBytes(4).toString('hex')}.imports.example.com`;

beforeAll(async () => {
  proxy = await startFaultProxy();
  proxy.inject(acmListCertificatesAsAws());
  proxy.inject(acmReimportAsAws());
  proxy.inject(acmDeleteInUseAsAws());
  const direct = awsClientConfig(stackInfo().awsEndpoint);
  acm = new ACMClient(direct);
  elb = new ElasticLoadBalancingV2Client(direct);
  ({ subnets } = await vpcWithTwoSubnets(new EC2Client(direct), 44));
});
afterAll(async () => {
  for (const s of sets) s.destroy();
  await proxy.stop();
});

/** A set of AWS clients through the proxy, and its metrics. */
function clients(): { aws: AwsClients; metrics: Metrics } {
  const metrics = new Metrics();
  const aws = createAwsClients({
    region: 'us-east-1',
    clock: realClock,
    metrics,
    endpoint: proxy.endpoint,
    maxAttempts: 2,
    credentials: { accessKeyId: 'testing', secretAccessKey: 'testing' },
  });
  sets.push(aws);
  return { aws, metrics };
}

/** A fresh ImportedCertificates, as after a restart: nothing in memory. */
function fresh(): ImportedCertificates {
  return importedCertificatesOf(clients().aws, { clock: realClock });
}

function ownerOf(name: string): OwnershipTags {
  return { cluster: 'itest-acm', owner: `web/${name}`, uid: `uid-${name}-${randomBytes(4).toString('hex')}` };
}

/** A TLS Secret `web/<name>` for `<host>.<domain>`, valid from a second ago (NotBefore has whole seconds). */
function secret(name: string, host: string, key?: FixtureKey) {
  const c = makeCertificate({ cn: `${host}.${domain}`, ...(key !== undefined ? { key } : {}) });
  return { ...tlsSecret('web', name, c), pem: c.cert };
}

async function tagsOf(arn: string): Promise<Record<string, string>> {
  const out = await acm.send(new ListTagsForCertificateCommand({ CertificateArn: arn }));
  return Object.fromEntries((out.Tags ?? []).map((t) => [t.Key ?? '', t.Value ?? '']));
}

async function exists(arn: string): Promise<boolean> {
  try {
    await acm.send(new DescribeCertificateCommand({ CertificateArn: arn }));
    return true;
  } catch (err) {
    if ((err as Error).name === 'ResourceNotFoundException') return false;
    throw err;
  }
}

/** What the certificate serves: its leaf, as GetCertificate answers. */
async function served(arn: string): Promise<X509Certificate> {
  const out = await acm.send(new GetCertificateCommand({ CertificateArn: arn }));
  return new X509Certificate(out.Certificate ?? '');
}

const count = (operation: string): number => proxy.count({ service: 'acm', operation });

describe('TLS Secrets imported into ACM', () => {
  it('imports once with every tag in the same call; a second ensure changes nothing and costs one GetResources', async () => {
    const owner = ownerOf('gw1');
    const s = secret('tls', 'shop');
    const { aws, metrics } = clients();
    const imports = importedCertificatesOf(aws, { clock: realClock });
    proxy.resetCalls();
    const first = await imports.ensure(s, owner);
    expect(first.outcome).toBe('import');
    expect(count('ImportCertificate')).toBe(1);
    expect(count('AddTagsToCertificate')).toBe(0);
    const tags = await tagsOf(first.arn);
    expect(tags).toMatchObject({
      'skylift.dev/cluster': 'itest-acm',
      'skylift.dev/owner': 'web/gw1',
      'skylift.dev/uid': owner.uid,
      'skylift.dev/secret': 'web/tls',
      'skylift.dev/secret-uid': s.uid,
      'skylift.dev/key-algorithm': 'RSA_2048',
    });
    expect(tags['skylift.dev/tls-sha256']).toBe(
      new X509Certificate(s.pem).fingerprint256.replaceAll(':', '').toLowerCase(),
    );
    expect((await served(first.arn)).raw.equals(new X509Certificate(s.pem).raw)).toBe(true);
    expect(await counterValue(metrics.awsCalls, { service: 'acm', operation: 'ImportCertificate' })).toBe(1);

    proxy.resetCalls();
    const again = await imports.ensure(s, owner);
    expect(again).toEqual({ arn: first.arn, outcome: 'current', notAfter: first.notAfter });
    expect(proxy.countsByOperation()).toEqual({ 'tagging:GetResources': 1 });
  });

  it('a rotated Secret is re-imported into the same ARN: the new certificate is served, the tags kept and the fingerprint moved', async () => {
    const owner = ownerOf('gw2');
    const before = secret('rotating', 'rotate');
    const imports = fresh();
    const { arn } = await imports.ensure(before, owner);
    const after = { ...secret('rotating', 'rotate'), uid: before.uid };
    proxy.resetCalls();
    const rotated = await imports.ensure(after, owner);
    expect(rotated).toMatchObject({ arn, outcome: 'reimport' });
    expect(count('ImportCertificate')).toBe(1);
    expect(count('AddTagsToCertificate')).toBe(1);
    expect((await served(arn)).raw.equals(new X509Certificate(after.pem).raw)).toBe(true);
    const tags = await tagsOf(arn);
    expect(tags['skylift.dev/tls-sha256']).toBe(
      new X509Certificate(after.pem).fingerprint256.replaceAll(':', '').toLowerCase(),
    );
    expect(tags['skylift.dev/uid']).toBe(owner.uid);
    expect(tags['skylift.dev/secret']).toBe('web/rotating');
    // And settled: the next pass changes nothing.
    proxy.resetCalls();
    expect((await fresh().ensure(after, owner)).outcome).toBe('current');
    expect(count('ImportCertificate')).toBe(0);
  });

  it('through the proxy, moto re-imports as AWS does: tags refused, the certificate’s tags kept (dev/acmFidelity.ts)', async () => {
    const viaProxy = new ACMClient(awsClientConfig(proxy.endpoint));
    try {
      const arn = await importCertificate(viaProxy, { domain: `fidelity.${domain}` });
      await viaProxy.send(
        new AddTagsToCertificateCommand({ CertificateArn: arn, Tags: [{ Key: 'k', Value: 'v' }] }),
      );
      const next = makeCertificate({ cn: `fidelity.${domain}` });
      const reimport = (tags?: { Key: string; Value: string }[]) =>
        viaProxy.send(
          new ImportCertificateCommand({
            CertificateArn: arn,
            Certificate: Buffer.from(next.cert),
            PrivateKey: Buffer.from(next.key),
            ...(tags !== undefined ? { Tags: tags } : {}),
          }),
        );
      await expect(reimport([{ Key: 'x', Value: 'y' }])).rejects.toMatchObject({
        name: 'ValidationException',
      });
      expect((await reimport()).CertificateArn).toBe(arn);
      expect(await tagsOf(arn)).toEqual({ k: 'v' });
      expect((await served(arn)).raw.equals(new X509Certificate(next.cert).raw)).toBe(true);
    } finally {
      viaProxy.destroy();
    }
  });

  it('an import whose answer was lost (the operator killed before it heard) is found by a fresh instance: no second certificate', async () => {
    const owner = ownerOf('gw3');
    const s = secret('lost', 'lost');
    proxy.inject({
      service: 'acm',
      operation: 'ImportCertificate',
      fault: { kind: 'dropResponse' },
      times: 1,
    });
    await expect(fresh().ensure(s, owner)).rejects.toThrow(/import Secret web\/lost into ACM/);
    expect(count('ImportCertificate')).toBeGreaterThanOrEqual(1);
    proxy.resetCalls();
    const found = await fresh().ensure(s, owner);
    expect(found.outcome).toBe('current');
    expect(count('ImportCertificate')).toBe(0);
    expect(await tagsOf(found.arn)).toMatchObject({ 'skylift.dev/uid': owner.uid });
  });

  it('a certificate the Tagging API does not list yet (it lags) is found in ACM before a new import', async () => {
    const owner = ownerOf('gw4');
    const s = secret('lagging', 'lag');
    const { arn } = await fresh().ensure(s, owner);
    // The Tagging API answers nothing this once, as it may right after an import.
    proxy.inject({
      service: 'tagging',
      operation: 'GetResources',
      fault: {
        kind: 'respond',
        respond: () =>
          Promise.resolve({
            status: 200,
            headers: { 'content-type': 'application/x-amz-json-1.1' },
            body: JSON.stringify({ ResourceTagMappingList: [], PaginationToken: '' }),
          }),
      },
      times: 1,
    });
    proxy.resetCalls();
    const again = await fresh().ensure(s, owner);
    expect(again).toMatchObject({ arn, outcome: 'current' });
    expect(count('ImportCertificate')).toBe(0);
    expect(count('ListCertificates')).toBe(1);
    // ListTagsForCertificate only for imported certificates of the Secret's names: this one.
    expect(count('ListTagsForCertificate')).toBe(1);
  });

  it('without tag:GetResources (AccessDenied) ACM is asked directly: the same certificate, no second import', async () => {
    const owner = ownerOf('gw5');
    const s = secret('denied', 'denied');
    const { arn } = await fresh().ensure(s, owner);
    const rule = proxy.inject({
      service: 'tagging',
      operation: 'GetResources',
      fault: {
        kind: 'respond',
        respond: () =>
          Promise.resolve(errorResponse('tagging', 400, 'AccessDeniedException', 'not authorized', 'req-1')),
      },
    });
    try {
      const imports = fresh();
      proxy.resetCalls();
      expect(await imports.ensure(s, owner)).toMatchObject({ arn, outcome: 'current' });
      expect(count('ImportCertificate')).toBe(0);
      // Refused once, then not asked again by this instance.
      proxy.resetCalls();
      expect(await imports.ensure(s, owner)).toMatchObject({ arn, outcome: 'current' });
      expect(proxy.count({ service: 'tagging' })).toBe(0);
      expect(count('ListCertificates')).toBe(1);
    } finally {
      rule.remove();
    }
  });

  it('a certificate of the same domain that is not ours is never touched; release deletes only the owner’s imports not kept', async () => {
    const owner = ownerOf('gw6');
    const neighbour = ownerOf('gw6-neighbour');
    const foreign = await importCertificate(acm, { domain: `shared.${domain}` });
    const kept = secret('kept', 'shared');
    const dropped = secret('dropped', 'dropped');
    const imports = fresh();
    const a = await imports.ensure(kept, owner);
    const b = await imports.ensure(dropped, owner);
    const theirs = await imports.ensure(kept, neighbour);
    expect(new Set([a.arn, b.arn, theirs.arn, foreign]).size).toBe(4);
    expect(await tagsOf(foreign)).toEqual({});

    proxy.resetCalls();
    const released = await fresh().release(owner, [a.arn]);
    expect(released.deleted).toEqual([b.arn]);
    expect(count('DeleteCertificate')).toBe(1);
    expect(await exists(b.arn)).toBe(false);
    for (const arn of [a.arn, theirs.arn, foreign]) expect(await exists(arn)).toBe(true);
    expect((await served(foreign)).subject).toBe(`CN=shared.${domain}`);
    // delete(arn) refuses what is not the owner's.
    expect(await fresh().delete(foreign, owner)).toBe('notOurs');
    expect(await fresh().delete(theirs.arn, owner)).toBe('notOurs');
    expect(await exists(foreign)).toBe(true);
    // Again: nothing left to delete.
    expect((await fresh().release(owner, [a.arn])).deleted).toEqual([]);
  });

  it('a certificate a listener serves is not deleted (CertificateInUseError, a requeue) until the listener moves', async () => {
    const owner = ownerOf('gw7');
    const s = secret('served', 'served');
    const imports = fresh();
    const { arn } = await imports.ensure(s, owner);
    const lb = await elb.send(
      new CreateLoadBalancerCommand({
        Name: `acm-imports-${randomBytes(3).toString('hex')}`,
        Subnets: subnets,
        Type: 'application',
      }),
    );
    const listener = await elb.send(
      new CreateListenerCommand({
        LoadBalancerArn: lb.LoadBalancers?.[0]?.LoadBalancerArn,
        Protocol: 'HTTPS',
        Port: 443,
        Certificates: [{ CertificateArn: arn }],
        DefaultActions: [{ Type: 'fixed-response', FixedResponseConfig: { StatusCode: '404' } }],
      }),
    );
    const err = await imports.release(owner, []).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(CertificateInUseError);
    expect((err as CertificateInUseError).arns).toEqual([arn]);
    expect(await exists(arn)).toBe(true);
    await elb.send(new DeleteListenerCommand({ ListenerArn: listener.Listeners?.[0]?.ListenerArn }));
    expect((await imports.release(owner, [])).deleted).toEqual([arn]);
    expect(await exists(arn)).toBe(false);
  });

  it('a key type change (RSA to ECDSA, which ACM refuses to re-import) imports a new certificate; release deletes the old one', async () => {
    const owner = ownerOf('gw8');
    const rsa = secret('rekeyed', 'rekeyed');
    const imports = fresh();
    const old = await imports.ensure(rsa, owner);
    const ec = { ...secret('rekeyed', 'rekeyed', 'ec:prime256v1'), uid: rsa.uid };
    const now = await imports.ensure(ec, owner);
    expect(now.outcome).toBe('import');
    expect(now.arn).not.toBe(old.arn);
    // Settled on the new one (the fingerprint decides, not the ARN's order).
    expect((await fresh().ensure(ec, owner)).arn).toBe(now.arn);
    expect((await imports.release(owner, [now.arn])).deleted).toEqual([old.arn]);
  });

  it('an invalid Secret is refused before any AWS call, naming the Secret and the field', async () => {
    const owner = ownerOf('gw9');
    const good = secret('broken', 'broken');
    proxy.resetCalls();
    await expect(fresh().ensure({ ...good, type: 'Opaque' }, owner)).rejects.toThrow(InvalidTlsSecretError);
    await expect(
      fresh().ensure({ ...good, privateKey: secret('x', 'other').privateKey }, owner),
    ).rejects.toThrow(
      'Secret web/broken: tls.key: the private key is not the key of the certificate in tls.crt',
    );
    expect(proxy.calls()).toEqual([]);
  });
});
