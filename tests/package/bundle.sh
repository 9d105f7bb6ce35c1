#!/usr/bin/env bash
# The relocatable bundle (scripts/package.sh, docs/install.md), unpacked outside the build tree
# and run with an empty environment (no LD_LIBRARY_PATH):
#   every library gpufleet and the bundled libraries load resolves inside the bundle or to glibc
#   (ldd), and every binary's needs are the bundle's, glibc's, or the site's runtimes (NVML,
#   CUDA, cuBLAS, NCCL, MPI), which are never bundled;
#   gpufleet plan, topo show, agent --once and the completion work from the bundle, also through
#   a symlink in another folder, and from a copy moved elsewhere.
# Usage: bundle.sh BUILD_DIR
set -euo pipefail
B=$(realpath "$1")
fail() { echo "FAIL: $*" >&2; exit 1; }
shopt -s nullglob
tars=("$B"/packages/gpufleet-*-linux-x86_64.tar.gz)
((${#tars[@]} == 1)) || fail "no bundle in $B/packages (run scripts/package.sh $B)"
WORK=$(mktemp -d /tmp/gpufleet-bundle.XXXXXX)
trap 'rm -rf "$WORK"' EXIT
trap 'exit 130' INT TERM
tar -xzf "${tars[0]}" -C "$WORK"
D=$(echo "$WORK"/gpufleet-*-linux-x86_64)
[[ -x $D/bin/gpufleet ]] || fail "the bundle has no bin/gpufleet"
run() { env -i PATH=/usr/bin:/bin HOME="$WORK" "$@"; }

is_glibc() {
  case $1 in
    linux-vdso.so.* | ld-linux*.so* | libc.so.* | libm.so.* | libdl.so.* | libpthread.so.* | \
      librt.so.* | libresolv.so.* | libutil.so.* | libanl.so.* | libmvec.so.*) return 0 ;;
  esac
  return 1
}
is_site() {
  case $1 in
    libnvidia-ml.so* | libcuda.so* | libcudart.so* | libcublas.so* | libcublasLt.so* | \
      libnccl.so* | libmpi.so*) return 0 ;;
  esac
  return 1
}

echo "== what the bundle's files need"
elves=()
for f in "$D"/bin/* "$D"/lib/*.so* "$D"/lib/hwloc/*.so; do
  [[ $(od -An -c -N4 "$f" | tr -d " ") == "177ELF" ]] && elves+=("$f")
done
((${#elves[@]} >= 10)) || fail "only ${#elves[@]} ELF files in the bundle"
for f in "${elves[@]}"; do
  grep -q 'RUNPATH.*\$ORIGIN' <<< "$(readelf -d "$f")" || fail "$f has no \$ORIGIN RUNPATH"
  while read -r need; do
    is_glibc "$need" && continue
    is_site "$need" && continue
    [[ -e $D/lib/$need ]] || fail "$f needs $need, which is neither bundled nor glibc's"
  done < <(readelf -d "$f" | sed -n 's/.*(NEEDED).*\[\(.*\)\]/\1/p')
done
# The loader's view, for everything that needs no site runtime: all of it inside the bundle.
for f in "$D/bin/gpufleet" "$D"/lib/*.so* "$D"/lib/hwloc/*.so; do
  while read -r name arrow path _; do
    [[ $arrow == "=>" ]] || continue
    is_glibc "$name" && continue
    is_site "$name" && continue
    [[ $path == "$D"/* ]] || fail "$(basename "$f"): ldd resolves $name to $path, outside the bundle"
  done < <(run ldd "$f")
done
echo "   ${#elves[@]} ELF files; every library inside the bundle, glibc's or the site's"

echo "== gpufleet plan from the bundle, from /"
(cd / && run "$D/bin/gpufleet" plan > "$WORK/plan.txt") || fail "plan exited $?"
grep -q "^Memory per GPU" "$WORK/plan.txt" || fail "plan printed no plan"
(cd / && run "$D/bin/gpufleet" topo show > "$WORK/topo.txt") || fail "topo show exited $?"
grep -qi "numa" "$WORK/topo.txt" || fail "topo show: no NUMA nodes"
(cd / && run "$D/bin/gpufleet" agent --once --no-nvml --listen 127.0.0.1:0 > "$WORK/metrics") ||
  fail "agent --once exited $?"
grep -q '^gpufleet_check_status{check="disk-space"}' "$WORK/metrics" || fail "agent --once: no check results"

echo "== through a symlink, and moved"
mkdir -p "$WORK/usr-local-bin"
ln -s "$D/bin/gpufleet" "$WORK/usr-local-bin/gpufleet"
run "$WORK/usr-local-bin/gpufleet" --version > /dev/null || fail "run through a symlink"
mv "$D" "$WORK/moved"
run "$WORK/moved/bin/gpufleet" plan --format json > "$WORK/plan.json" || fail "moved: plan"
grep -q '"schema": "gpufleet.plan/v1"' "$WORK/plan.json" || fail "moved: no plan JSON"
out=$(run bash -c "source '$WORK/moved/share/bash-completion/completions/gpufleet'
  COMP_WORDS=(gpufleet emit pro); COMP_CWORD=2; _gpufleet; echo \"\${COMPREPLY[*]}\"")
[[ $out == "prometheus-scrape prometheus-rules" ]] || fail "completion of emit pro: '$out'"
echo "PASS: the bundle runs from anywhere on its own libraries"
