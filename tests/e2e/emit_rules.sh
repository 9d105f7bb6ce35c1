#!/bin/bash
# The emitted alerting rules pass promtool's checker and its unit tests (prometheus/rules_test.yml:
# each alert fires on its fault; a healthy training node fires none), and every alert of the
# emitted file is listed in that healthy-node group, so a new rule cannot skip the test.
# usage: emit_rules.sh GPUFLEET_BINARY.  Skips (77) without promtool unless CI=true.
set -uo pipefail
BIN=$1
if ! command -v promtool >/dev/null; then
  [ "${CI:-}" = true ] && { echo "FAIL: promtool missing"; exit 1; }
  echo "SKIP: promtool not installed"; exit 77
fi
D=$(mktemp -d /tmp/gpufleet-rules.XXXXXX)
trap 'rm -rf "$D"' EXIT
"$BIN" emit prometheus-rules -o "$D/gpufleet-rules.yml" || exit 1
cp "$(dirname "$0")/prometheus/rules_test.yml" "$D/"
promtool check rules "$D/gpufleet-rules.yml" || exit 1
promtool test rules "$D/rules_test.yml" || exit 1
missing=0
for a in $(sed -n 's/^ *- alert: //p' "$D/gpufleet-rules.yml"); do
  if ! grep -q "alertname: $a, exp_alerts: \[\]}" "$D/rules_test.yml"; then
    echo "FAIL: alert $a is not in the healthy-node group of rules_test.yml"; missing=1
  fi
done
exit $missing
