#!/usr/bin/env bash
# The relocatable bundle (scripts/package.sh, docs/install.md), unpacked outside the build tree
# and run with an empty environment (no LD_LIBRARY_PATH):
#   every library the binaries and the bundled libraries load resolves inside the bundle or to
#   glibc (ldd), the GPU runtimes (NVML, CUDA, cuBLAS, NCCL: never bundled) aside; no binary
#   needs MPI: only the helpers' MPI plugin (lib/gpufleet/gpufleet-mpi.so) needs the site's
#   libmpi.so.40, and its other libraries are the bundle's;
#   gpufleet plan, topo show, agent --once and the completion work from the bundle, also through
#   a symlink in another folder, and from a copy moved elsewhere; `bench collective` runs from it
#   under the host's mpirun (the plugin loads the host's Open MPI), and without the plugin says so.
# Usage: bundle.sh BUILD_DIR
set -euo pipefail
. "$(dirname "$0")/../ompi_env.sh"
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
is_gpu_runtime() {
  case $1 in
    libnvidia-ml.so* | libcuda.so* | libcudart.so* | libcublas.so* | libcublasLt.so* | \
      libnccl.so*) return 0 ;;
  esac
  return 1
}
PLUGIN=$D/lib/gpufleet/gpufleet-mpi.so
[[ -f $PLUGIN ]] || fail "the bundle has no lib/gpufleet/gpufleet-mpi.so"

echo "== what the bundle's files need"
elves=()
for f in "$D"/bin/* "$D"/lib/*.so* "$D"/lib/hwloc/*.so "$PLUGIN"; do
  [[ $(od -An -c -N4 "$f" | tr -d " ") == "177ELF" ]] && elves+=("$f")
done
((${#elves[@]} >= 10)) || fail "only ${#elves[@]} ELF files in the bundle"
for f in "${elves[@]}"; do
  grep -q 'RUNPATH.*\$ORIGIN' <<< "$(readelf -d "$f")" || fail "$f has no \$ORIGIN RUNPATH"
  while read -r need; do
    is_glibc "$need" && continue
    is_gpu_runtime "$need" && continue
    [[ $f == "$PLUGIN" && $need == libmpi.so.* ]] && continue
    [[ -e $D/lib/$need ]] || fail "$f needs $need, which is neither bundled nor glibc's"
  done < <(readelf -d "$f" | sed -n 's/.*(NEEDED).*\[\(.*\)\]/\1/p')
done
# The loader's view of every binary and bundled library (all they load, transitively): inside
# the bundle, glibc's, or a GPU runtime. The plugin is left out here: the site's libmpi brings its
# own libraries, wherever the site's Open MPI keeps them.
for f in "$D"/bin/* "$D"/lib/*.so* "$D"/lib/hwloc/*.so; do
  while read -r name arrow path _; do
    [[ $arrow == "=>" ]] || continue
    is_glibc "$name" && continue
    is_gpu_runtime "$name" && continue
    [[ $path == "$D"/* ]] || fail "$(basename "$f"): ldd resolves $name to $path, outside the bundle"
  done < <(run ldd "$f")
done
echo "   ${#elves[@]} ELF files; every library inside the bundle or glibc's (GPU runtimes aside);"
echo "   only the MPI plugin needs the site's libmpi.so.40"

echo "== gpufleet plan from the bundle, from /"
(cd / && run "$D/bin/gpufleet" plan > "$WORK/plan.txt") || fail "plan exited $?"
grep -q "^Memory per GPU" "$WORK/plan.txt" || fail "plan printed no plan"
(cd / && run "$D/bin/gpufleet" topo show > "$WORK/topo.txt") || fail "topo show exited $?"
grep -qi "numa" "$WORK/topo.txt" || fail "topo show: no NUMA nodes"
(cd / && run "$D/bin/gpufleet" agent --once --no-nvml --listen 127.0.0.1:0 > "$WORK/metrics") ||
  fail "agent --once exited $?"
grep -q '^gpufleet_check_status{check="disk-space"}' "$WORK/metrics" || fail "agent --once: no check results"

echo "== bench collective from the bundle, under the host's mpirun"
command -v mpirun > /dev/null || fail "mpirun is not installed (scripts/deps.sh installs openmpi-bin)"
# 2 ranks on shared memory, loopback only (tests/ompi_env.sh).
(cd / && run "${OMPI_TEST_ENV[@]}" timeout 120 mpirun -np 2 "$D/bin/gpufleet" bench collective all_reduce \
  -b 1K -e 64K -f 4 -w 1 -n 3 --format json -o "$WORK/coll.json" > "$WORK/coll.out" 2>&1) ||
  { cat "$WORK/coll.out"; fail "bench collective under mpirun from the bundle"; }
grep -q '"ranks": 2' "$WORK/coll.json" || fail "bench collective: no 2-rank report"
# Without its plugin the helper names the file (exit 3) before MPI starts: one line per node
# (here one node of 2 ranks), from its first rank.
cp -a "$D" "$WORK/noplugin"
rm "$WORK/noplugin/lib/gpufleet/gpufleet-mpi.so"
set +e
run "${OMPI_TEST_ENV[@]}" timeout 120 mpirun -np 2 "$WORK/noplugin/bin/gpufleet" bench collective \
  > /dev/null 2> "$WORK/noplugin.err"
rc=$?
set -e
n=$(grep -c "noplugin/lib/gpufleet/gpufleet-mpi.so is missing" "$WORK/noplugin.err" || true)
[[ $rc == 3 && $n == 1 ]] ||
  { cat "$WORK/noplugin.err"; fail "without its plugin: exit $rc and $n lines, want 3 and 1 naming it"; }
# The plugin exports one symbol; everything else in it is hidden.
exported=$(nm -D --defined-only "$PLUGIN" | awk '$2 == "T" || $2 == "D" || $2 == "B" { print $3 }')
[[ $exported == gpufleet_mpi_plugin_v1 ]] || fail "the plugin exports: $exported"

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
