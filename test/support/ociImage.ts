// An OCI image archive (what `make image` writes and a node's containerd
// imports) read without a container engine: its index, manifest and config,
// and its layers unpacked into a root filesystem with GNU tar, applying the
// OCI whiteouts as containerd's overlay snapshots would.
import { execFile } from 'node:child_process';
import { readFile, rm, stat } from 'node:fs/promises';
import { join, posix } from 'node:path';
import { promisify } from 'node:util';

const run = promisify(execFile);

/** A content descriptor of the OCI image spec. */
export interface Descriptor {
  readonly mediaType: string;
  readonly digest: string;
  readonly size: number;
  readonly annotations?: Readonly<Record<string, string>>;
}

/** The parts of an image config (`application/vnd.oci.image.config.v1+json`) tests read. */
export interface ImageConfig {
  readonly architecture: string;
  readonly os: string;
  readonly config: {
    readonly User?: string;
    readonly Entrypoint?: readonly string[];
    readonly Cmd?: readonly string[];
    readonly Env?: readonly string[];
    readonly WorkingDir?: string;
    readonly Labels?: Readonly<Record<string, string>>;
  };
  readonly rootfs: { readonly diff_ids: readonly string[] };
}

/** An OCI archive extracted into a directory. */
export interface OciImage {
  /** Where the archive was extracted (oci-layout, index.json, blobs/). */
  readonly dir: string;
  /** The manifest's descriptor in index.json (its annotations carry the image's name). */
  readonly manifestDescriptor: Descriptor;
  readonly layers: readonly Descriptor[];
  readonly config: ImageConfig;
  /** Bytes of the archive file. */
  readonly archiveBytes: number;
}

function blobPath(dir: string, digest: string): string {
  const [algorithm = '', hex = ''] = digest.split(':');
  return join(dir, 'blobs', algorithm, hex);
}

async function readJson<T>(path: string): Promise<T> {
  return JSON.parse(await readFile(path, 'utf8')) as T;
}

/** Extracts an OCI archive (a tar of an OCI layout with one image) into `dir` and reads its manifest and config. */
export async function openOciArchive(archive: string, dir: string): Promise<OciImage> {
  await run('tar', ['-xf', archive, '-C', dir]);
  const index = await readJson<{ manifests: Descriptor[] }>(join(dir, 'index.json'));
  if (index.manifests.length !== 1)
    throw new Error(`${archive}: ${index.manifests.length} manifests in index.json, want 1`);
  const manifestDescriptor = index.manifests[0] as Descriptor;
  const manifest = await readJson<{ config: Descriptor; layers: Descriptor[] }>(
    blobPath(dir, manifestDescriptor.digest),
  );
  const config = await readJson<ImageConfig>(blobPath(dir, manifest.config.digest));
  return {
    dir,
    manifestDescriptor,
    layers: manifest.layers,
    config,
    archiveBytes: (await stat(archive)).size,
  };
}

// Uncompressed or gzip layers: what buildah writes and containerd 1.6 reads.
const layerTypes = new Map([
  ['application/vnd.oci.image.layer.v1.tar', []],
  ['application/vnd.oci.image.layer.v1.tar+gzip', ['-z']],
  ['application/vnd.docker.image.rootfs.diff.tar.gzip', ['-z']],
]);
const whiteoutPrefix = '.wh.';
const opaqueMarker = '.wh..wh..opq';

/**
 * Unpacks the image's layers in order into `rootfs` (an empty directory), with
 * owners and modes as recorded: a `.wh.NAME` entry removes NAME of the layers
 * below, `.wh..wh..opq` empties its directory first (the OCI layer spec).
 */
export async function unpackLayers(image: OciImage, rootfs: string): Promise<void> {
  for (const layer of image.layers) {
    if (!layerTypes.has(layer.mediaType))
      throw new Error(`layer ${layer.digest}: unsupported media type ${layer.mediaType}`);
    const blob = blobPath(image.dir, layer.digest);
    const gzip = layerTypes.get(layer.mediaType) ?? [];
    const { stdout } = await run('tar', [...gzip, '-tf', blob], { maxBuffer: 256 * 1024 * 1024 });
    for (const entry of stdout.split('\n')) {
      const name = posix.basename(entry);
      if (!name.startsWith(whiteoutPrefix)) continue;
      const parent = join(rootfs, posix.dirname(entry));
      if (name === opaqueMarker) {
        await rm(parent, { recursive: true, force: true });
        continue;
      }
      await rm(join(parent, name.slice(whiteoutPrefix.length)), { recursive: true, force: true });
    }
    await run(
      'tar',
      [
        ...gzip,
        '-xf',
        blob,
        '-C',
        rootfs,
        '--same-owner',
        '--numeric-owner',
        '--preserve-permissions',
        '--keep-directory-symlink',
        `--exclude=${whiteoutPrefix}*`,
      ],
      { maxBuffer: 16 * 1024 * 1024 },
    );
  }
}

/** Bytes of the files under `dir` (apparent sizes, hard links once), as `du -sb` counts them. */
export async function treeBytes(dir: string): Promise<number> {
  const { stdout } = await run('du', ['-sb', dir]);
  return Number(stdout.split('\t')[0]);
}
