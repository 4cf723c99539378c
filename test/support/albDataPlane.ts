// The ALB data plane (dev/albDataPlane/) as an optional component of the integration stack.
import { AlbDataPlane, type AlbDataPlaneOptions } from '../../dev/albDataPlane/dataPlane.ts';
import type { AwsFaultProxy } from '../../dev/awsFaultProxy.ts';
import { stackInfo } from './stack.ts';

/**
 * Starts a data plane following the stack's emulator (resolves after its first sync); with
 * `proxy`, DescribeTargetHealth through that proxy reports what the data plane measured, and the
 * keys of certificates imported through it are recorded for the data plane's HTTPS listeners.
 * Stop it in afterAll/afterEach; the proxy rules stay until the proxy's faults are cleared.
 */
export async function startAlbDataPlane(
  opts: Omit<AlbDataPlaneOptions, 'endpoint'> & { readonly proxy?: AwsFaultProxy } = {},
): Promise<AlbDataPlane> {
  const { proxy, ...rest } = opts;
  const dp = await AlbDataPlane.start({ endpoint: stackInfo().awsEndpoint, ...rest });
  proxy?.inject(dp.describeTargetHealthRule());
  proxy?.tap(dp.importCertificateTap());
  return dp;
}
