#!/usr/bin/env bash
# The OCI image (scripts/package.sh, docs/install.md): its layout read and its digests checked
# by tools that know the format (skopeo, umoci); its root file system, unpacked, runs the entry
# point (the agent) and gpufleet on the image's own files in a chroot; and podman runs the image
# where this machine lets it (it says why when it cannot; the chroot run is then the proof).
# Usage: oci.sh BUILD_DIR. Needs root (umoci unpack, chroot).
set -euo pipefail
B=$(realpath "$1")
fail() { echo "FAIL: $*" >&2; exit 1; }
[[ $(id -u) == 0 ]] || fail "needs root (umoci unpack, chroot)"
for t in skopeo umoci python3; do
  command -v "$t" > /dev/null || fail "$t is not installed (scripts/deps.sh)"
done
shopt -s nullglob
layouts=("$B"/packages/gpufleet-*-oci)
((${#layouts[@]} == 1)) || fail "no OCI layout in $B/packages (run scripts/package.sh $B)"
L=${layouts[0]}
VERSION=${L##*/gpufleet-}
VERSION=${VERSION%-oci}
WORK=$(mktemp -d /tmp/gpufleet-oci.XXXXXX)
PODMAN=(podman --root "$WORK/storage" --runroot "$WORK/runroot" --storage-driver vfs
  --cgroup-manager cgroupfs --events-backend none)
mounted=0
cleanup() {
  if ((mounted)); then
    umount "$R/proc" 2> /dev/null || true
    umount -R "$R/sys" 2> /dev/null || true
  fi
  if [[ -d $WORK/storage ]]; then "${PODMAN[@]}" rm -af > /dev/null 2>&1 || true; fi
  umount -R "$WORK/storage" 2> /dev/null || true
  # podman's helpers may still be writing under its storage for a moment after a failed run
  # (seen once in CI: "rm: cannot remove .../storage: Directory not empty"): retry, then insist.
  local tries
  for tries in 1 2 3 4 5; do
    rm -rf "$WORK" 2> /dev/null && return 0
    sleep 1
  done
  rm -rf "$WORK"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

echo "== skopeo: the layout and its digests"
skopeo inspect "oci:$L:gpufleet:$VERSION" > "$WORK/inspect.json" || fail "skopeo inspect"
skopeo inspect --config "oci:$L:gpufleet:$VERSION" > "$WORK/config.json" || fail "skopeo inspect --config"
python3 - "$WORK/inspect.json" "$WORK/config.json" << 'EOF'
import json, sys
inspect, config = (json.load(open(p)) for p in sys.argv[1:3])
assert inspect["Architecture"] == "amd64" and inspect["Os"] == "linux", inspect
entry = config["config"]["Entrypoint"]
assert entry == ["/opt/gpufleet/bin/gpufleet", "agent"], entry
assert "9401/tcp" in config["config"]["ExposedPorts"], config["config"]
print("   entry point:", " ".join(entry + config["config"]["Cmd"]))
EOF
# Copying reads every blob and checks it against its digest.
skopeo copy -q "oci:$L:gpufleet:$VERSION" "dir:$WORK/copy" || fail "skopeo copy (a digest is wrong?)"

echo "== umoci: unpacked into a runtime bundle"
umoci unpack --image "$L:gpufleet:$VERSION" "$WORK/unpacked" > /dev/null || fail "umoci unpack"
R=$WORK/unpacked/rootfs
python3 - "$WORK/unpacked/config.json" << 'EOF'
import json, sys
args = json.load(open(sys.argv[1]))["process"]["args"]
assert args[:2] == ["/opt/gpufleet/bin/gpufleet", "agent"], args
EOF

echo "== the image's root file system, in a chroot"
# /proc first: the loader finds $ORIGIN (the bundle's RUNPATH) through /proc/self/exe, as in any
# container.
mount -t proc proc "$R/proc"
mount --rbind /sys "$R/sys"
mounted=1
in_image() { chroot "$R" /opt/gpufleet/bin/gpufleet "$@"; }
v=$(in_image --version) || fail "--version in the image"
[[ $v == "$VERSION" ]] || fail "--version says $v"
in_image plan > "$WORK/plan.txt" || fail "plan in the image"
grep -q "^Memory per GPU" "$WORK/plan.txt" || fail "plan in the image printed no plan"
set +e
in_image agent --once --no-nvml --listen 127.0.0.1:0 > "$WORK/metrics" 2> "$WORK/agent.err"
rc=$?
in_image bench collective > /dev/null 2> "$WORK/bench.err"
brc=$?
in_image bench gpu > /dev/null 2> "$WORK/gpu.err"
grc=$?
set -e
umount "$R/proc"
umount -R "$R/sys"
mounted=0
[[ $rc == 0 ]] || { cat "$WORK/agent.err"; fail "the entry point with --once exited $rc"; }
grep -q '^gpufleet_check_status{check="disk-space"}' "$WORK/metrics" || fail "the entry point served no check results"
# The image carries no MPI, CUDA or NCCL (the site's): bench says which is missing, exit 3.
[[ $brc == 3 ]] && grep -q "libmpi.so" "$WORK/bench.err" ||
  { cat "$WORK/bench.err"; fail "bench collective in the image: exit $brc, want 3 naming libmpi"; }
# bench gpu needs no MPI: what it misses here is CUDA (or it was built without), never libmpi.
[[ $grc == 3 ]] && ! grep -q "libmpi" "$WORK/gpu.err" && grep -Eq "libcudart|without (the )?CUDA" "$WORK/gpu.err" ||
  { cat "$WORK/gpu.err"; fail "bench gpu in the image: exit $grc, want 3 naming CUDA, not MPI"; }

echo "== podman"
if ! command -v podman > /dev/null; then
  fail "podman is not installed (scripts/deps.sh)"
fi
if "${PODMAN[@]}" load -q -i "$B/packages/gpufleet-$VERSION-oci.tar" > "$WORK/load.out" 2>&1; then
  if "${PODMAN[@]}" run --rm --network none --cgroups disabled --ulimit host \
    "localhost/gpufleet:$VERSION" --once --no-nvml --listen 127.0.0.1:0 \
    > "$WORK/podman.metrics" 2> "$WORK/podman.err"; then
    grep -q '^gpufleet_check_status{check="disk-space"}' "$WORK/podman.metrics" || fail "podman run: no check results"
    echo "   podman ran the image's entry point"
  else
    echo "   podman loaded the image but could not run a container on this machine:"
    echo "   $(grep -v '^$' "$WORK/podman.err" | tail -1)"
    echo "   (skopeo and umoci read the layout, and its root file system ran above)"
  fi
else
  cat "$WORK/load.out"
  fail "podman load of the image archive"
fi
echo "PASS: the OCI image is well-formed and its entry point runs"
