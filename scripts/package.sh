#!/usr/bin/env bash
# Builds gpufleet's packages from a build folder (docs/install.md):
#
#   scripts/package.sh [BUILD_DIR]      (default build/release; built first if needed)
#
# into BUILD_DIR/packages/:
#   gpufleet_V_amd64.deb, gpufleet-cuda_V_amd64.deb   CPack DEB (cmake/Packaging.cmake); the
#                                                     second only where CUDA and NCCL were found
#   gpufleet-V-linux-x86_64.tar.gz                    the relocatable bundle: bin/, lib/ with
#                                                     every shared library the binaries need except
#                                                     glibc and the site's runtimes (NVML, CUDA,
#                                                     cuBLAS, NCCL; MPI only for the MPI plugin
#                                                     lib/gpufleet/), RUNPATH $ORIGIN/../lib
#   gpufleet-V-oci/ and gpufleet-V-oci.tar            an OCI image layout (and its archive) built
#                                                     from the bundle plus the build host's glibc,
#                                                     no base image; entry point the agent
# Reproducible: file times are SOURCE_DATE_EPOCH (default: the last commit's time).
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$(pwd)
B=$(realpath -m "${1:-build/release}")
if [[ ! -f $B/CMakeCache.txt ]]; then
  preset=$(basename "$B")
  cmake --preset "$preset" > /dev/null
fi
log=$(mktemp)
cmake --build "$B" -j "$(nproc)" > "$log" 2>&1 ||
  { tail -30 "$log" >&2; rm -f "$log"; echo "package: the build failed" >&2; exit 1; }
rm -f "$log"
for tool in dpkg-shlibdeps patchelf; do
  command -v "$tool" > /dev/null || { echo "package: $tool is not installed (scripts/deps.sh)" >&2; exit 3; }
done

VERSION=$(sed -n 's/^CMAKE_PROJECT_VERSION:STATIC=//p' "$B/CMakeCache.txt")
export SOURCE_DATE_EPOCH=${SOURCE_DATE_EPOCH:-$(git log -1 --format=%ct 2> /dev/null || date +%s)}
OUT=$B/packages
rm -rf "$OUT"
mkdir -p "$OUT"
WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT

# ---- Debian packages
(cd "$B" && cpack -G DEB -B "$WORK/cpack" > "$WORK/cpack.log" 2>&1) ||
  { tail -20 "$WORK/cpack.log" >&2; echo "package: cpack failed" >&2; exit 1; }
cp "$WORK"/cpack/*.deb "$OUT/"

# ---- relocatable bundle
NAME=gpufleet-$VERSION-linux-x86_64
BUNDLE=$WORK/$NAME
for component in cli cuda; do
  cmake --install "$B" --component "$component" --prefix "$BUNDLE" --strip > /dev/null
done
mkdir -p "$BUNDLE/lib"

# Libraries never bundled: glibc's own, and the runtimes that must be the site's (NVML comes with
# the driver; CUDA, cuBLAS and NCCL with the toolkit; MPI must be the one mpirun/srun launch with).
is_system() {
  case $1 in
    ld-linux*.so* | libc.so.* | libm.so.* | libdl.so.* | libpthread.so.* | librt.so.* | \
      libresolv.so.* | libutil.so.* | libanl.so.* | libmvec.so.*) return 0 ;;
    libnvidia-ml.so* | libcuda.so* | libcudart.so* | libcublas.so* | libcublasLt.so* | \
      libnccl.so* | libmpi.so*) return 0 ;;
  esac
  return 1
}

# Copies into DIR the libraries FILE needs (its DT_NEEDED, recursively), resolved as the build
# host resolves them.
bundle_needs() {
  local file=$1 dir=$2 name path needs line
  # Resolved in full before anything is copied: ldd of a file whose libraries are being written
  # would fail.
  mapfile -t needs < <(readelf -d "$file" | sed -n 's/.*(NEEDED).*\[\(.*\)\]/\1/p')
  local -A where=()
  while read -r line; do
    [[ $line == *" => /"* ]] && where[${line%% *}]=$(echo "$line" | awk '{ print $3 }')
  done < <(ldd "$file" 2> /dev/null | sed 's/^[[:space:]]*//')
  for name in "${needs[@]}"; do
    is_system "$name" && continue
    [[ -e $dir/$name ]] && continue
    path=${where[$name]:-}
    [[ -n $path && -e $path ]] || { echo "package: $file needs $name, which is not found" >&2; exit 1; }
    cp -L "$path" "$dir/$name"
    chmod 0644 "$dir/$name"
    patchelf --set-rpath '$ORIGIN' "$dir/$name"
    bundle_needs "$dir/$name" "$dir"
  done
}

for exe in "$BUNDLE"/bin/*; do
  patchelf --set-rpath '$ORIGIN/../lib' "$exe"
  bundle_needs "$exe" "$BUNDLE/lib"
done
# The helpers' MPI plugin (lib/gpufleet/gpufleet-mpi.so): the one file that needs the site's
# libmpi.so.40; its other libraries are the bundle's.
for plugin in "$BUNDLE"/lib/gpufleet/*.so; do
  patchelf --set-rpath '$ORIGIN/..' "$plugin"
  bundle_needs "$plugin" "$BUNDLE/lib"
done
# Loaded with dlopen: OpenSSL for the agent's TLS, and hwloc's PCI plugin (gpufleet points
# HWLOC_PLUGINS_PATH at lib/hwloc when it runs from a bundle).
for lib in libssl.so.3 libcrypto.so.3; do
  path=$(ldconfig -p | awk -v n="$lib" '$1 == n && /x86-64/ && !found { print $NF; found = 1 }')
  [[ -n $path ]] || { echo "package: $lib is not installed (libssl3)" >&2; exit 1; }
  cp -L "$path" "$BUNDLE/lib/$lib"
  patchelf --set-rpath '$ORIGIN' "$BUNDLE/lib/$lib"
  bundle_needs "$BUNDLE/lib/$lib" "$BUNDLE/lib"
done
hwloc_plugins=$(dirname "$(ldconfig -p | awk '$1 == "libhwloc.so.15" && !found { print $NF; found = 1 }')")/hwloc
if [[ -f $hwloc_plugins/hwloc_pci.so ]]; then
  mkdir -p "$BUNDLE/lib/hwloc"
  cp -L "$hwloc_plugins/hwloc_pci.so" "$BUNDLE/lib/hwloc/"
  patchelf --set-rpath '$ORIGIN/..' "$BUNDLE/lib/hwloc/hwloc_pci.so"
  bundle_needs "$BUNDLE/lib/hwloc/hwloc_pci.so" "$BUNDLE/lib"
fi
glibc=$(ldd --version | awk 'NR == 1 { print $NF }')
cat > "$BUNDLE/README" << EOF
gpufleet $VERSION, relocatable bundle for x86_64 Linux with glibc $glibc or newer.

Run it from anywhere: $NAME/bin/gpufleet plan. Nothing here needs installing; the libraries in
lib/ are found through the binaries' RUNPATH (\$ORIGIN/../lib). Not included, taken from the
host when a command needs them (it says which is missing, exit 3): the NVIDIA driver's NVML
(libnvidia-ml.so.1), the CUDA runtime, cuBLAS and NCCL (gpufleet-bench-cuda: bench gpu and
bench collective --backend nccl), and Open MPI's libmpi.so.40 (bench collective and pairs: it
must be the MPI that mpirun or srun launches with; only lib/gpufleet/gpufleet-mpi.so, which the
helpers load for those two commands, needs it).

Manual pages: man -l share/man/man1/gpufleet.1.gz. Completion: source
share/bash-completion/completions/gpufleet. Documentation: share/doc/gpufleet/.
EOF
tar_reproducibly() { # OUTPUT DIR MEMBER...
  local out=$1 dir=$2
  shift 2
  tar --sort=name --owner=0 --group=0 --numeric-owner --mtime="@$SOURCE_DATE_EPOCH" \
    --format=posix --pax-option=exthdr.name=%d/PaxHeaders/%f,delete=atime,delete=ctime \
    -C "$dir" -cf - "$@" | gzip -9n > "$out"
}
tar_reproducibly "$OUT/$NAME.tar.gz" "$WORK" "$NAME"

# ---- OCI image layout: one layer with the bundle in /opt/gpufleet and the glibc it runs on.
ROOTFS=$WORK/rootfs
mkdir -p "$ROOTFS/opt" "$ROOTFS/lib/x86_64-linux-gnu" "$ROOTFS/lib64" "$ROOTFS/etc" "$ROOTFS/tmp" \
  "$ROOTFS/proc" "$ROOTFS/sys" "$ROOTFS/dev" "$ROOTFS/run"
cp -a "$BUNDLE" "$ROOTFS/opt/gpufleet"
chmod 1777 "$ROOTFS/tmp"
for lib in libc.so.6 libm.so.6 libpthread.so.0 libdl.so.2 librt.so.1; do
  cp -L "/lib/x86_64-linux-gnu/$lib" "$ROOTFS/lib/x86_64-linux-gnu/"
done
cp -L /lib64/ld-linux-x86-64.so.2 "$ROOTFS/lib64/"
echo "root:x:0:0:root:/:/opt/gpufleet/bin/gpufleet" > "$ROOTFS/etc/passwd"
echo "root:x:0:" > "$ROOTFS/etc/group"
# The NVIDIA container toolkit mounts libnvidia-ml.so.1 into /usr/lib/x86_64-linux-gnu.
echo "/usr/lib/x86_64-linux-gnu" > "$ROOTFS/etc/ld.so.conf"

LAYOUT=$OUT/gpufleet-$VERSION-oci
mkdir -p "$LAYOUT/blobs/sha256"
blob() { # FILE -> prints its digest, moving it into the layout
  local d
  d=$(sha256sum "$1" | cut -d' ' -f1)
  mv "$1" "$LAYOUT/blobs/sha256/$d"
  echo "$d"
}
tar --sort=name --owner=0 --group=0 --numeric-owner --mtime="@$SOURCE_DATE_EPOCH" \
  --format=posix --pax-option=delete=atime,delete=ctime -C "$ROOTFS" -cf "$WORK/layer.tar" .
diff_id=$(sha256sum "$WORK/layer.tar" | cut -d' ' -f1)
gzip -9n "$WORK/layer.tar"
layer_size=$(stat -c %s "$WORK/layer.tar.gz")
layer=$(blob "$WORK/layer.tar.gz")
created=$(date -u -d "@$SOURCE_DATE_EPOCH" +%Y-%m-%dT%H:%M:%SZ)
cat > "$WORK/config.json" << EOF
{"architecture":"amd64","os":"linux","created":"$created","config":{"Entrypoint":["/opt/gpufleet/bin/gpufleet","agent"],"Cmd":["--listen",":9401"],"Env":["PATH=/opt/gpufleet/bin","NVIDIA_VISIBLE_DEVICES=all","NVIDIA_DRIVER_CAPABILITIES=utility"],"ExposedPorts":{"9401/tcp":{}},"WorkingDir":"/","Labels":{"org.opencontainers.image.title":"gpufleet","org.opencontainers.image.version":"$VERSION","org.opencontainers.image.description":"gpufleet node agent: GPU and node metrics, health checks"}},"rootfs":{"type":"layers","diff_ids":["sha256:$diff_id"]},"history":[{"created":"$created","created_by":"scripts/package.sh: the gpufleet $VERSION bundle and the build host's glibc $glibc"}]}
EOF
config_size=$(stat -c %s "$WORK/config.json")
config=$(blob "$WORK/config.json")
cat > "$WORK/manifest.json" << EOF
{"schemaVersion":2,"mediaType":"application/vnd.oci.image.manifest.v1+json","config":{"mediaType":"application/vnd.oci.image.config.v1+json","digest":"sha256:$config","size":$config_size},"layers":[{"mediaType":"application/vnd.oci.image.layer.v1.tar+gzip","digest":"sha256:$layer","size":$layer_size}],"annotations":{"org.opencontainers.image.version":"$VERSION"}}
EOF
manifest_size=$(stat -c %s "$WORK/manifest.json")
manifest=$(blob "$WORK/manifest.json")
cat > "$LAYOUT/index.json" << EOF
{"schemaVersion":2,"mediaType":"application/vnd.oci.image.index.v1+json","manifests":[{"mediaType":"application/vnd.oci.image.manifest.v1+json","digest":"sha256:$manifest","size":$manifest_size,"platform":{"architecture":"amd64","os":"linux"},"annotations":{"org.opencontainers.image.ref.name":"gpufleet:$VERSION"}}]}
EOF
echo '{"imageLayoutVersion":"1.0.0"}' > "$LAYOUT/oci-layout"
tar --sort=name --owner=0 --group=0 --numeric-owner --mtime="@$SOURCE_DATE_EPOCH" \
  -C "$LAYOUT" -cf "$OUT/gpufleet-$VERSION-oci.tar" .

echo "package: $OUT"
(cd "$OUT" && ls -l --time-style=+ | awk 'NR > 1 { printf "  %-44s %10d bytes\n", $NF, $5 }')
