// Certificates ACM holds as ISSUED in the emulator: moto leaves a requested certificate
// PENDING_VALIDATION (for a minute), so tests import a self-signed one made with openssl.
import { execFile } from 'node:child_process';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { ImportCertificateCommand, type ACMClient } from '@aws-sdk/client-acm';

const run = promisify(execFile);

/** A self-signed certificate and its private key, PEM. */
export interface SelfSigned {
  readonly certificatePem: string;
  readonly privateKeyPem: string;
}

/**
 * A self-signed certificate for `domain` (subject CN, and with `sans` its DNS subject alternative
 * names), valid for `days` days from now, with an RSA 2048 key (or ECDSA P-256 with `ec`).
 */
export async function selfSignedCertificate(o: {
  domain: string;
  sans?: readonly string[];
  days?: number;
  ec?: boolean;
}): Promise<SelfSigned> {
  const dir = await mkdtemp(join(tmpdir(), 'skylift-acm-'));
  try {
    const names = [o.domain, ...(o.sans ?? [])];
    await run('openssl', [
      'req',
      '-x509',
      ...(o.ec === true
        ? ['-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1']
        : ['-newkey', 'rsa:2048']),
      '-nodes',
      '-keyout',
      join(dir, 'key.pem'),
      '-out',
      join(dir, 'cert.pem'),
      '-days',
      String(o.days ?? 30),
      '-subj',
      `/CN=${o.domain}`,
      '-addext',
      `subjectAltName=${names.map((n) => `DNS:${n}`).join(',')}`,
    ]);
    return {
      certificatePem: await readFile(join(dir, 'cert.pem'), 'utf8'),
      privateKeyPem: await readFile(join(dir, 'key.pem'), 'utf8'),
    };
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

/**
 * Imports into ACM a self-signed certificate for `domain` (and `sans`), valid for `days` days from
 * now, with an RSA 2048 key (or ECDSA P-256 with `ec`); reimports it under `arn` when given (a
 * renewal of an imported certificate). Returns its ARN.
 */
export async function importCertificate(
  acm: ACMClient,
  o: { domain: string; sans?: readonly string[]; days?: number; ec?: boolean; arn?: string },
): Promise<string> {
  return (await importSelfSigned(acm, o)).arn;
}

/** {@link importCertificate}, also returning the certificate and key imported. */
export async function importSelfSigned(
  acm: ACMClient,
  o: { domain: string; sans?: readonly string[]; days?: number; ec?: boolean; arn?: string },
): Promise<SelfSigned & { readonly arn: string }> {
  const made = await selfSignedCertificate(o);
  const out = await acm.send(
    new ImportCertificateCommand({
      Certificate: Buffer.from(made.certificatePem),
      PrivateKey: Buffer.from(made.privateKeyPem),
      ...(o.arn !== undefined ? { CertificateArn: o.arn } : {}),
    }),
  );
  return { ...made, arn: out.CertificateArn ?? '' };
}
