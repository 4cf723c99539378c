// The operator image that `make image` builds (hack/build-image.sh, issue 17):
// its name, the OCI archive it is saved as, and how a node's containerd takes
// it in. Mirrors the script as paths.ts mirrors hack/lib.sh.
import { execFile } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { repoRoot, toolPaths, type ToolPaths } from './paths.ts';

const run = promisify(execFile);

/** The image's repository: the chart's default `image.repository`. */
export const skyliftImageRepository = 'ghcr.io/skylift-dev/skylift';

/** An image saved as an OCI archive. */
export interface ImageArchive {
  /** The name it is imported under, e.g. ghcr.io/skylift-dev/skylift:0.1.0. */
  readonly name: string;
  /** The OCI archive's path. */
  readonly archive: string;
}

/**
 * The operator image of this clone's package.json version (the chart's
 * appVersion): its name and the archive `make image` writes into the cache.
 */
export function skyliftImage(paths: ToolPaths = toolPaths(), root: string = repoRoot): ImageArchive {
  const { version } = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as { version: string };
  return {
    name: `${skyliftImageRepository}:${version}`,
    archive: join(paths.cacheDir, 'images', `skylift-${version}.oci.tar`),
  };
}

/**
 * Imports OCI archives into the containerd listening on `socket`, namespace
 * k8s.io (where the kubelet looks for images), one after the other: what a
 * node does at start and `make image CONTAINERD_ADDRESS=…` does for a running one.
 */
export async function importImages(socket: string, archives: readonly string[]): Promise<void> {
  for (const archive of archives)
    await run('ctr', ['--address', socket, '-n', 'k8s.io', 'images', 'import', '--all-platforms', archive], {
      timeout: 120_000,
    });
}
