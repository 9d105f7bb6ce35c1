#!/bin/bash
# `gpufleet check --slurm` against a real one-node Slurm: an injected fault (an InfiniBand port
# DOWN, from a capture fixture) drains the node with a "gpufleet:" reason; once the port is back the
# node is resumed; a node drained by someone else is left alone.
# usage: check_slurm.sh GPUFLEET_BINARY REPO_ROOT.  Skips (77) without Slurm unless CI=true.
set -uo pipefail
BIN=$1 ROOT=$2
. "$(dirname "$0")/slurm_lib.sh"
FX=$ROOT/tests/e2e/check
"$ROOT/scripts/start-slurm.sh" "$T" a100 2 >/dev/null || { echo "FAIL: Slurm did not start"; exit 1; }
export SLURM_CONF=$T/slurm.conf
state() { sinfo -h -n "$H" -o %T; }
reason() { scontrol show node -o "$H" | sed -n 's/.* Reason=//p'; }
fail() { echo "FAIL: $*"; echo "state=$(state) reason=$(reason)"; exit 1; }

"$BIN" check "${SET[@]}" --root "$FX/ib-down" --slurm --node "$H"; rc=$?
[ $rc = 1 ] || fail "check on a DOWN port exited $rc, want 1"
case "$(state)" in drain*|drained*) ;; *) fail "node not drained";; esac
reason | grep -q '^gpufleet: infiniband: mlx5_0 port 1' || fail "drain reason"

"$BIN" check "${SET[@]}" --root "$FX/ib-up" --slurm --node "$H"; rc=$?
[ $rc = 0 ] || fail "check on a healthy node exited $rc, want 0"
# After a resume the node reads "idle*" until slurmd answers again (<= a few seconds).
for i in $(seq 100); do [ "$(state)" = idle ] && break; sleep 0.1; done
[ "$(state)" = idle ] || fail "node not resumed"

scontrol update nodename="$H" state=drain reason="maintenance by admin"
"$BIN" check "${SET[@]}" --root "$FX/ib-up" --slurm --node "$H" | grep -q "left alone" || fail "no 'left alone'"
case "$(state)" in drain*|drained*) ;; *) fail "a node drained by someone else was resumed";; esac
reason | grep -q '^maintenance by admin' || fail "the admin's reason was overwritten"
echo "ok: drained on an injected fault, resumed after, left the admin's drain alone"
