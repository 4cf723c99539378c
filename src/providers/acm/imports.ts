// Kubernetes TLS Secrets imported into ACM for a consumer (a Gateway's listener naming a Secret in
// certificateRefs: an ALB serves ACM certificates only), owned by the consumer's ownership tags and
// kept current when the Secret rotates — in the same ARN, so the listeners serving it keep serving.
// The AWS side; what to do is decided by the pure planner (importPlan.ts) from the certificates
// found by tag, and the Secret is checked before any call (tlsSecret.ts).
import type { ACMClient, CertificateSummary, ImportCertificateCommandInput } from '@aws-sdk/client-acm';
import type { OwnershipTags } from '../../apis/managed.ts';
import type { Clock } from '../../runtime/clock.ts';
import { RetryableError } from '../../runtime/errors.ts';
import type { Logger } from '../../runtime/logger.ts';
import { awsCall } from '../aws/calls.ts';
import type { AwsClients } from '../aws/clients.ts';
import { AwsReason } from '../aws/errors.ts';
import { taggedResourcesOf, type TaggedResources } from '../aws/taggedResources.ts';
import { tagList, tagMap } from '../aws/tags.ts';
import { albKeyTypes } from './certificates.ts';
import { acmImportOf, acmOf } from './client.ts';
import {
  acmImportErrorTable,
  CertificateInUseError,
  isAccessDenied,
  isCertificateInUse,
  isCertificateNotFound,
} from './errors.ts';
import {
  isOwnImport,
  ownerQueryTags,
  planEnsure,
  planRelease,
  type EnsureStep,
  type TaggedCertificate,
} from './importPlan.ts';
import { validateTlsSecret, type TlsMaterial, type TlsSecret } from './tlsSecret.ts';

/** The Tagging API's resource type of ACM certificates. */
export const acmCertificateResourceType = 'acm:certificate';

/** What {@link ImportedCertificates.ensure} did. */
export type EnsureOutcome = EnsureStep['kind'];

/** The certificate a Secret is served from, and what ensure did to get there. */
export interface EnsuredCertificate {
  readonly arn: string;
  /**
   * `import`: a new certificate; `reimport`: the Secret rotated, the same ARN now holds its
   * certificate; `retag`: only tags changed; `current`: nothing was changed.
   */
  readonly outcome: EnsureOutcome;
  /** The leaf's NotAfter, ms since the epoch (for a consumer's status or an expiry warning). */
  readonly notAfter: number;
}

/** What {@link ImportedCertificates.release} did. */
export interface Released {
  /** Certificates deleted (or found already gone). */
  readonly deleted: readonly string[];
}

/** What an {@link ImportedCertificates} is built with. */
export interface ImportedCertificatesDeps {
  /** ACM, with the SDK's retries: reads, re-imports (idempotent), tags and deletes. */
  readonly acm: () => Promise<ACMClient>;
  /** ACM without SDK retries: new imports only (a lost answer is looked for, not re-sent). */
  readonly acmImport: () => Promise<ACMClient>;
  /** Lookups by tag (the Resource Groups Tagging API). */
  readonly tagged: TaggedResources;
  /** What validity is judged against. */
  readonly clock: Clock;
  /** Where a refused tag:GetResources is reported (once per instance). */
  readonly logger?: Logger;
}

/** ListCertificates pages read at most (1,000 certificates each) when ACM is asked directly. */
const maxListPages = 50;

/**
 * TLS Secrets imported into ACM for the consumers that serve them, in one account and region.
 *
 * One certificate per (consumer, Secret): it carries the consumer's ownership tags (its uid and
 * cluster are what it is found by, with the Secret's `namespace/name`), the Secret's uid, the
 * fingerprint of what was imported and its key algorithm ({@link importTags}). Nothing here ever
 * changes a certificate without the consumer's uid and cluster and a `skylift.dev/secret` tag, as
 * ACM itself reports them just before the change (the Tagging API may lag, ACM's own tags do not).
 *
 * Calls for one (consumer, Secret) are run one after the other within an instance; the instance
 * keeps nothing else between calls, so a fresh one (after a restart) behaves the same.
 */
export class ImportedCertificates {
  private readonly d: ImportedCertificatesDeps;
  private readonly queues = new Map<string, Promise<unknown>>();
  private tagLookupDenied = false;

  constructor(deps: ImportedCertificatesDeps) {
    this.d = deps;
  }

  /**
   * Makes ACM serve `secret`'s certificate for `owner` and returns its ARN. Validates the Secret
   * first ({@link validateTlsSecret}; an invalid one throws InvalidTlsSecretError, a TerminalError
   * naming the Secret and the field, before any AWS call). Then finds the owner's certificate for
   * the Secret by tag — the Tagging API (one GetResources), and, when that finds none and only
   * then, ACM itself (ListCertificates, and ListTagsForCertificate for each certificate imported
   * under one of the leaf's names: the Tagging API may not list a certificate imported moments
   * ago) — and does what {@link planEnsure} says: import with every tag in the same call;
   * re-import into the same ARN (rotation) then tag; tag; or nothing.
   *
   * Idempotent and crash-safe: a second call with the same Secret makes no change (one
   * GetResources); a call after a crash anywhere finds what the first imported. May block on the
   * client's rate limit; mutates ACM only as said. Throws the engine's typed errors (AWS
   * failures classified with acmImportErrorTable; a refused tag:GetResources is not one: ACM is
   * asked directly, and a warning logged once).
   */
  async ensure(secret: TlsSecret, owner: OwnershipTags): Promise<EnsuredCertificate> {
    const m = validateTlsSecret(secret, this.d.clock.now());
    return this.serially(`${owner.cluster}/${owner.uid}/${m.secret}`, () => this.ensureValid(m, owner));
  }

  /**
   * Deletes every certificate `owner` imported from a Secret whose ARN is not in `keep` (pass
   * every ARN the owner still serves or is about to: what ensure returned this pass, and what
   * its listeners still name). Certificates are found by tag (the Tagging API; ACM directly when
   * that is refused), so one a crash left unrecorded is deleted too; another owner's, another
   * cluster's and untagged ones are never touched. Each deletion is checked against ACM's own
   * tags first.
   *
   * Idempotent; may block on the rate limit; mutates ACM (DeleteCertificate). A certificate a
   * listener still uses is left, the others deleted, and then it throws
   * {@link CertificateInUseError} (a RequeueAfter): call again once the listener moved.
   */
  async release(owner: OwnershipTags, keep: Iterable<string>): Promise<Released> {
    const found = await this.findOwned(owner, undefined);
    const doomed = planRelease(found, owner, new Set(keep));
    const deleted: string[] = [];
    const inUse: string[] = [];
    for (const arn of doomed) {
      const r = await this.deleteOwn(arn, owner);
      if (r === 'inUse') inUse.push(arn);
      else if (r === 'deleted') deleted.push(arn);
    }
    if (inUse.length > 0) throw new CertificateInUseError(inUse);
    return { deleted };
  }

  /**
   * Deletes the certificate `arn` if ACM says it is one `owner` imported from a Secret; resolves
   * `deleted` (or `gone`: already deleted), `notOurs` (left alone), and throws
   * {@link CertificateInUseError} when a listener still uses it. Idempotent; may block on the rate
   * limit; mutates ACM.
   */
  async delete(arn: string, owner: OwnershipTags): Promise<'deleted' | 'gone' | 'notOurs'> {
    const r = await this.deleteOwn(arn, owner);
    if (r === 'inUse') throw new CertificateInUseError([arn]);
    return r;
  }

  private async ensureValid(m: TlsMaterial, owner: OwnershipTags): Promise<EnsuredCertificate> {
    let found = await this.findOwned(owner, m);
    let step = planEnsure(found, owner, m);
    if (step.kind === 'import' && !this.tagLookupDenied) {
      // Before a new import only: ACM's own view, which a just-imported certificate is in at once.
      found = await this.fromAcm(owner, m);
      step = planEnsure(found, owner, m);
    }
    const done = (arn: string): EnsuredCertificate => ({ arn, outcome: step.kind, notAfter: m.notAfter });
    switch (step.kind) {
      case 'current':
        return done(step.arn);
      case 'retag':
        await this.checkOurs(step.arn, owner, m);
        await this.addTags(step.arn, step.tags);
        return done(step.arn);
      case 'reimport':
        await this.checkOurs(step.arn, owner, m);
        await this.importInto(step.arn, m);
        if (Object.keys(step.tags).length > 0) await this.addTags(step.arn, step.tags);
        return done(step.arn);
      case 'import':
        return done(await this.importNew(m, step.tags));
    }
  }

  /** The owner's imports (of `m`'s Secret when given), by tag: the Tagging API, or ACM when that is refused. */
  private async findOwned(owner: OwnershipTags, m: TlsMaterial | undefined): Promise<TaggedCertificate[]> {
    if (!this.tagLookupDenied) {
      try {
        const found = await this.d.tagged.find(
          m !== undefined
            ? `find the ACM certificate imported from Secret ${m.secret} by tag`
            : 'find ACM certificates imported from Secrets by tag',
          { resourceTypes: [acmCertificateResourceType], tags: ownerQueryTags(owner, m?.secret) },
        );
        return found.filter((c) => isOwnImport(c, owner, m?.secret));
      } catch (err) {
        if (!isAccessDenied(err)) throw err;
        this.tagLookupDenied = true;
        this.d.logger?.warn(
          { err: err instanceof Error ? err.message : String(err) },
          'tag:GetResources refused: certificates imported from Secrets are looked for with ACM ListCertificates and ListTagsForCertificate (a call per certificate); grant tag:GetResources (deploy/iam/policy.json) to the operator’s role',
        );
      }
    }
    return this.fromAcm(owner, m);
  }

  /**
   * The owner's imports as ACM reports them: every imported certificate (ListCertificates, every
   * page), then the tags of each whose domain name is one of `m`'s names (of each imported one
   * when `m` is undefined). A call per candidate.
   */
  private async fromAcm(owner: OwnershipTags, m: TlsMaterial | undefined): Promise<TaggedCertificate[]> {
    const names = m !== undefined ? new Set(m.names) : undefined;
    const candidates = (await this.listImported()).filter(
      (s) => names === undefined || names.has((s.DomainName ?? '').toLowerCase()),
    );
    const out: TaggedCertificate[] = [];
    for (const s of candidates) {
      const arn = s.CertificateArn ?? '';
      const tags = await this.tagsOf(arn);
      if (tags !== undefined && isOwnImport({ arn, tags }, owner, m?.secret)) out.push({ arn, tags });
    }
    return out;
  }

  /** Every imported certificate of an ALB key type in the account and region (ListCertificates, every page). */
  private async listImported(): Promise<CertificateSummary[]> {
    const { ListCertificatesCommand } = await import('@aws-sdk/client-acm');
    const client = await this.d.acm();
    const out: CertificateSummary[] = [];
    let next: string | undefined;
    for (let page = 0; page < maxListPages; page++) {
      const answer = await awsCall('list ACM certificates', acmImportErrorTable, () =>
        client.send(
          new ListCertificatesCommand({
            Includes: { keyTypes: [...albKeyTypes] },
            MaxItems: 1000,
            ...(next !== undefined ? { NextToken: next } : {}),
          }),
        ),
      );
      for (const s of answer.CertificateSummaryList ?? [])
        if (s.CertificateArn !== undefined && s.Type === 'IMPORTED') out.push(s);
      next = answer.NextToken;
      if (next === undefined || next === '') return out;
    }
    throw new RetryableError(
      AwsReason.AwsError,
      `list ACM certificates: more than ${maxListPages} pages of ListCertificates; given up`,
    );
  }

  /** A certificate's tags as ACM has them now; undefined when it does not exist. */
  private async tagsOf(arn: string): Promise<Record<string, string> | undefined> {
    const { ListTagsForCertificateCommand } = await import('@aws-sdk/client-acm');
    const client = await this.d.acm();
    try {
      const out = await awsCall(`read the tags of ACM certificate ${arn}`, acmImportErrorTable, () =>
        client.send(new ListTagsForCertificateCommand({ CertificateArn: arn })),
      );
      return tagMap(out.Tags);
    } catch (err) {
      if (isCertificateNotFound(err)) return undefined;
      throw err;
    }
  }

  /** Throws unless ACM says `arn` exists and is `owner`'s import of `m`'s Secret (retried: the next pass looks again). */
  private async checkOurs(arn: string, owner: OwnershipTags, m: TlsMaterial): Promise<void> {
    const tags = await this.tagsOf(arn);
    if (tags === undefined || !isOwnImport({ arn, tags }, owner, m.secret))
      throw new RetryableError(
        AwsReason.AwsError,
        `ACM certificate ${arn}, listed by tag for Secret ${m.secret}, ${tags === undefined ? 'no longer exists' : 'does not carry its tags any more'}; looking again`,
      );
  }

  /** ImportCertificate with every tag in the same call (a crash never leaves an untagged import). */
  private async importNew(m: TlsMaterial, tags: Readonly<Record<string, string>>): Promise<string> {
    const { ImportCertificateCommand } = await import('@aws-sdk/client-acm');
    const client = await this.d.acmImport();
    const out = await awsCall(`import Secret ${m.secret} into ACM`, acmImportErrorTable, () =>
      client.send(new ImportCertificateCommand({ ...importInput(m), Tags: tagList(tags) })),
    );
    if (out.CertificateArn === undefined || out.CertificateArn === '')
      throw new RetryableError(
        AwsReason.AwsError,
        `import Secret ${m.secret} into ACM: no ARN in the answer`,
      );
    return out.CertificateArn;
  }

  /** ImportCertificate into an existing ARN (no tags: ACM refuses tags on a re-import). */
  private async importInto(arn: string, m: TlsMaterial): Promise<void> {
    const { ImportCertificateCommand } = await import('@aws-sdk/client-acm');
    const client = await this.d.acm();
    await awsCall(`re-import Secret ${m.secret} into ACM certificate ${arn}`, acmImportErrorTable, () =>
      client.send(new ImportCertificateCommand({ ...importInput(m), CertificateArn: arn })),
    );
  }

  private async addTags(arn: string, tags: Readonly<Record<string, string>>): Promise<void> {
    const { AddTagsToCertificateCommand } = await import('@aws-sdk/client-acm');
    const client = await this.d.acm();
    await awsCall(`tag ACM certificate ${arn}`, acmImportErrorTable, () =>
      client.send(new AddTagsToCertificateCommand({ CertificateArn: arn, Tags: tagList(tags) })),
    );
  }

  /** Deletes `arn` once ACM's tags say it is the owner's import. */
  private async deleteOwn(
    arn: string,
    owner: OwnershipTags,
  ): Promise<'deleted' | 'gone' | 'notOurs' | 'inUse'> {
    const tags = await this.tagsOf(arn);
    if (tags === undefined) return 'gone';
    if (!isOwnImport({ arn, tags }, owner)) return 'notOurs';
    const { DeleteCertificateCommand } = await import('@aws-sdk/client-acm');
    const client = await this.d.acm();
    try {
      await awsCall(`delete ACM certificate ${arn}`, acmImportErrorTable, () =>
        client.send(new DeleteCertificateCommand({ CertificateArn: arn })),
      );
      return 'deleted';
    } catch (err) {
      if (isCertificateInUse(err)) return 'inUse';
      if (isCertificateNotFound(err)) return 'gone';
      throw err;
    }
  }

  /** Runs `fn` after every earlier call for `key` in this instance has settled. */
  private serially<T>(key: string, fn: () => Promise<T>): Promise<T> {
    const before = this.queues.get(key) ?? Promise.resolve();
    const run = before.then(fn, fn);
    const settled = run.then(
      () => undefined,
      () => undefined,
    );
    this.queues.set(key, settled);
    void settled.then(() => {
      if (this.queues.get(key) === settled) this.queues.delete(key);
    });
    return run;
  }
}

/** The certificate, chain and key of an ImportCertificate. Pure. */
function importInput(
  m: TlsMaterial,
): Pick<ImportCertificateCommandInput, 'Certificate' | 'CertificateChain' | 'PrivateKey'> {
  return {
    Certificate: Buffer.from(m.certificate, 'utf8'),
    PrivateKey: Buffer.from(m.privateKey, 'utf8'),
    ...(m.chain !== undefined ? { CertificateChain: Buffer.from(m.chain, 'utf8') } : {}),
  };
}

/** What {@link importedCertificatesOf} needs beside the clients. */
export interface ImportedCertificatesOptions {
  readonly clock: Clock;
  readonly logger?: Logger;
}

/**
 * The imports of `aws`'s account and region, through its ACM client (made, and the SDK loaded, at
 * the first call) and its lookups by tag. Loads nothing until the first call.
 */
export function importedCertificatesOf(
  aws: AwsClients,
  o: ImportedCertificatesOptions,
): ImportedCertificates {
  return new ImportedCertificates({
    acm: () => acmOf(aws),
    acmImport: () => acmImportOf(aws),
    tagged: taggedResourcesOf(aws),
    clock: o.clock,
    ...(o.logger !== undefined ? { logger: o.logger } : {}),
  });
}
