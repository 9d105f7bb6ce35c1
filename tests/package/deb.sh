#!/usr/bin/env bash
# The Debian packages as a site would meet them (docs/install.md), from BUILD/packages
# (scripts/package.sh):
#   lintian shows no error; systemd-analyze verify accepts the units;
#   installed with dpkg into a scratch root (an overlay of / in a private mount and network
#   namespace, so the host's dpkg database and /etc never change): nothing is enabled or started,
#   `gpufleet --version`, `gpufleet check --spec /etc/gpufleet/cluster.yaml`, the Slurm wrapper
#   and the agent unit's own command line (from the unit file and /etc/default/gpufleet) run;
#   the bash completion loads; an admin's `systemctl enable`, then `dpkg --purge`, leaves nothing
#   of gpufleet behind.
# Usage: deb.sh BUILD_DIR. Needs root (CI runs as root).
set -euo pipefail
B=$(realpath "$1")
PKG=$B/packages
fail() { echo "FAIL: $*" >&2; exit 1; }
[[ $(id -u) == 0 ]] || fail "needs root (dpkg into an overlay root)"
for t in lintian dpkg-deb systemd-analyze unshare; do
  command -v "$t" > /dev/null || fail "$t is not installed (scripts/deps.sh)"
done
shopt -s nullglob
debs=("$PKG"/gpufleet_*_amd64.deb)
((${#debs[@]} == 1)) || fail "no gpufleet .deb in $PKG (run scripts/package.sh $B)"
all_debs=("$PKG"/*.deb)

WORK=$(mktemp -d /tmp/gpufleet-deb.XXXXXX)
cleanup() { rm -rf "$WORK"; }
trap cleanup EXIT
trap 'exit 130' INT TERM
echo "== lintian"
# Its temporary files (MLDBM databases) go to the test's folder, not /tmp.
if ! report=$(TMPDIR=$WORK lintian --fail-on error "${all_debs[@]}" 2>&1); then
  echo "$report"
  fail "lintian reports errors"
fi
echo "$report" | grep -v '^running with root' || true
cp "${all_debs[@]}" "$WORK/"

# Everything below runs in its own mount and network namespaces: the overlay, its /proc and
# its loopback vanish with them, whatever happens.
{
  cat "$(dirname "$0")/../ompi_env.sh"
  cat << 'INSIDE'
set -euo pipefail
W=$1
fail() { echo "FAIL: $*" >&2; exit 1; }
mount -t tmpfs tmpfs "$W/ov"
mkdir -p "$W/ov/upper" "$W/ov/work" "$W/root"
mount -t overlay overlay -o "lowerdir=/,upperdir=$W/ov/upper,workdir=$W/ov/work" "$W/root"
R=$W/root
mount -t proc proc "$R/proc"
mount --rbind /dev "$R/dev"
mount --rbind /sys "$R/sys"
mount -t tmpfs tmpfs "$R/tmp"
mount -t tmpfs tmpfs "$R/run"
ip link set lo up
cp "$W"/*.deb "$R/tmp/"
in_root() { chroot "$R" /usr/bin/env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin "$@"; }

echo "== dpkg -i"
in_root dpkg -i /tmp/$(basename "$W"/gpufleet_*_amd64.deb) > "$W/dpkg.log" 2>&1 ||
  { cat "$W/dpkg.log"; fail "dpkg -i failed"; }
grep -q '^Status: install ok installed' <<< "$(in_root dpkg -s gpufleet)" || fail "not installed"
conffiles=$(in_root dpkg-query -W -f='${Conffiles}\n' gpufleet)
grep -q /etc/gpufleet/cluster.yaml <<< "$conffiles" ||
  fail "/etc/gpufleet/cluster.yaml is not a conffile"
grep -q /etc/default/gpufleet <<< "$conffiles" ||
  fail "/etc/default/gpufleet is not a conffile"
grep -q "EDIT IT" "$R/etc/gpufleet/cluster.yaml" || fail "cluster.yaml does not say to edit it"
ls "$R"/etc/systemd/system/*.wants/gpufleet* 2> /dev/null && fail "the package enabled a unit"

echo "== systemd-analyze verify"
in_root systemd-analyze verify /lib/systemd/system/gpufleet-agent.service \
  /lib/systemd/system/gpufleet-check.service /lib/systemd/system/gpufleet-check.timer ||
  fail "systemd-analyze verify"

echo "== gpufleet --version; man; completion"
v=$(in_root gpufleet --version)
[[ $v == "$(dpkg-deb -f "$W"/gpufleet_*_amd64.deb Version)" ]] || fail "--version says $v"
in_root man -w gpufleet-agent > /dev/null 2>&1 || [[ -f $R/usr/share/man/man1/gpufleet-agent.1.gz ]] ||
  fail "no man page for gpufleet-agent"
out=$(in_root bash -c 'source /usr/share/bash-completion/completions/gpufleet
  COMP_WORDS=(gpufleet plan --format ""); COMP_CWORD=3; _gpufleet; echo "${COMPREPLY[*]}"')
[[ $out == "text json markdown html" ]] || fail "bash completion of plan --format: '$out'"

echo "== gpufleet check --spec /etc/gpufleet/cluster.yaml"
set +e
in_root gpufleet check --spec /etc/gpufleet/cluster.yaml > "$W/check.out" 2>&1
rc=$?
set -e
cat "$W/check.out"
# This machine is not the reference cluster (no A100s): the verdict is fail (1), never an
# input or environment error.
[[ $rc == 0 || $rc == 1 ]] || fail "check exited $rc"
grep -Eq '^node .*: (pass|fail)' "$W/check.out" || fail "check printed no verdict"

echo "== bench collective under mpirun (the helper loads /usr/lib/gpufleet/gpufleet-mpi.so)"
in_root "${OMPI_TEST_ENV[@]}" timeout 120 mpirun -np 2 gpufleet bench collective all_reduce -b 1K -e 1K -w 1 -n 2 \
  > "$W/bench.out" 2>&1 || { cat "$W/bench.out"; fail "bench collective from the package"; }
grep -q "^# verdict: pass" "$W/bench.out" || { cat "$W/bench.out"; fail "bench collective: no pass"; }

echo "== the Slurm wrapper (slurmd's empty environment)"
set +e
chroot "$R" /usr/bin/env -i /usr/sbin/gpufleet-healthcheck > "$W/hc.out" 2>&1
rc=$?
set -e
# No slurmd here: check --slurm says so (exit 3) after judging the node; it must have run.
grep -q "gpu-count" "$W/hc.out" || { cat "$W/hc.out"; fail "the wrapper did not run check"; }

echo "== the agent unit's command line"
unit=$R/lib/systemd/system/gpufleet-agent.service
exec_start=$(sed -n 's/^ExecStart=//p' "$unit")
env_file=$(sed -n 's/^EnvironmentFile=-\{0,1\}//p' "$unit")
[[ $env_file == /etc/default/gpufleet ]] || fail "EnvironmentFile is $env_file"
# As systemd runs it: the environment file's assignments, $VAR split on white space.
cmdline=$(in_root sh -c "set -a; . $env_file; set +a; eval echo \"$exec_start\"")
echo "   $cmdline"
# chroot itself in the background (in_root is a function: $! would be the subshell running it,
# and killing that left the agent running in this namespace after the test).
chroot "$R" /usr/bin/env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin $cmdline > "$W/agent.log" 2>&1 &
agent=$!
trap 'kill "$agent" 2> /dev/null || true' EXIT
ok=0
for _ in $(seq 1 50); do
  if curl -fsS --max-time 2 http://127.0.0.1:9401/metrics > "$W/metrics" 2> /dev/null; then
    ok=1
    break
  fi
  sleep 0.2
done
kill "$agent" 2> /dev/null || true
wait "$agent" 2> /dev/null || true
((ok)) || { cat "$W/agent.log"; fail "the agent unit's command line served no /metrics"; }
grep -q '^gpufleet_check_status' "$W/metrics" || fail "/metrics has no check results"

echo "== enable, then purge"
in_root systemctl enable gpufleet-agent.service gpufleet-check.timer > /dev/null 2>&1 ||
  fail "systemctl enable (offline, in the root)"
ls "$R"/etc/systemd/system/multi-user.target.wants/gpufleet-agent.service > /dev/null ||
  fail "enable made no link"
in_root dpkg --purge gpufleet > "$W/purge.log" 2>&1 || { cat "$W/purge.log"; fail "purge"; }
in_root dpkg -s gpufleet > /dev/null 2>&1 && fail "still installed after purge"
# Whatever the package changed is in the overlay's upper layer: nothing of it may remain
# besides dpkg's own records of the install and the purge.
left=$(cd "$W/ov/upper" && find . -mindepth 1 \( -type f -o -type l \) | grep -i gpufleet |
  grep -v -e '^./var/log/dpkg.log' -e '^./var/lib/dpkg/' -e '^./var/cache/' || true)
[[ -z $left ]] || { echo "$left"; fail "purge left the files above"; }
for d in etc/gpufleet usr/share/doc/gpufleet; do
  [[ ! -e $R/$d ]] || fail "purge left /$d"
done
echo "PASS: installed, ran, purged; nothing left"
INSIDE
} > "$WORK/inside.sh"
mkdir -p "$WORK/ov"
unshare --mount --net --propagation private bash "$WORK/inside.sh" "$WORK"
