#!/bin/bash
# The emitted alerting rules pass promtool's checker and its unit tests (prometheus/rules_test.yml:
# each alert fires on its fault; a healthy training node fires none), and every alert of the
# emitted file is listed in that healthy-node group, so a new rule cannot skip the test; and the
# fabric group a rack-scale NVLink spec adds fires on its faults and not on a whole, healthy domain.
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

# A rack-scale NVLink spec adds the fabric group: unit-tested here on three domains of a GB200
# NVL72 cluster (72 GPUs each): one whole and healthy, one with 2 GPUs registered, one split over
# two cliques; plus one GPU still registering and one whose fabric is unhealthy.
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
G=$D/gb200
mkdir -p "$G"
"$BIN" emit prometheus-rules "$ROOT/examples/gb200-nvl72-576gpu.yaml" -o "$G/gpufleet-rules.yml" || exit 1
promtool check rules "$G/gpufleet-rules.yml" || exit 1
{
  echo 'rule_files: [gpufleet-rules.yml]'
  echo 'evaluation_interval: 1m'
  echo 'tests:'
  echo '  - interval: 1m'
  echo '    input_series:'
  for g in $(seq 0 71); do
    echo "      - {series: 'gpufleet_gpu_fabric_info{instance=\"ok$((g / 4))\",gpu=\"$((g % 4))\",cluster_uuid=\"dom-ok\",clique_id=\"1\"}', values: '1x20'}"
    echo "      - {series: 'gpufleet_gpu_fabric_info{instance=\"sp$((g / 4))\",gpu=\"$((g % 4))\",cluster_uuid=\"dom-split\",clique_id=\"$((g / 36 + 1))\"}', values: '1x20'}"
  done
  for g in 0 1; do
    echo "      - {series: 'gpufleet_gpu_fabric_info{instance=\"sh0\",gpu=\"$g\",cluster_uuid=\"dom-short\",clique_id=\"1\"}', values: '1x20'}"
  done
  echo "      - {series: 'gpufleet_gpu_fabric_state{instance=\"ok0\",gpu=\"0\"}', values: '3x20'}"
  echo "      - {series: 'gpufleet_gpu_fabric_state{instance=\"ok0\",gpu=\"3\"}', values: '2x20'}"
  echo "      - {series: 'gpufleet_gpu_fabric_healthy{instance=\"ok0\",gpu=\"0\"}', values: '1x20'}"
  echo "      - {series: 'gpufleet_gpu_fabric_healthy{instance=\"ok0\",gpu=\"1\"}', values: '0x20'}"
  echo '    alert_rule_test:'
  echo '      - {eval_time: 15m, alertname: GpufleetFabricNotRegistered, exp_alerts: [{exp_labels: {severity: critical, instance: ok0, gpu: "3"}, exp_annotations: {summary: "ok0 GPU 3 has not completed its NVLink fabric registration (state 2)", action: "drain; check the fabric manager on the switch trays and the GPU'"'"'s fabric state (nvidia-smi -q)"}}]}'
  echo '      - {eval_time: 15m, alertname: GpufleetFabricUnhealthy, exp_alerts: [{exp_labels: {severity: critical, instance: ok0, gpu: "1"}, exp_annotations: {summary: "ok0 GPU 1 NVLink fabric reports degraded bandwidth, an unhealthy route or a wrong configuration", action: "drain; gpufleet check names what the health mask says"}}]}'
  echo '      - {eval_time: 15m, alertname: GpufleetNvlinkDomainShort, exp_alerts: [{exp_labels: {severity: warning, cluster_uuid: dom-short}, exp_annotations: {summary: "NVLink domain dom-short has 2 of its 72 GPUs registered", action: "a tray is down, unregistered or joined another domain: gpufleet_gpu_fabric_info names each GPU'"'"'s domain"}}]}'
  echo '      - {eval_time: 15m, alertname: GpufleetNvlinkDomainSplit, exp_alerts: [{exp_labels: {severity: warning, cluster_uuid: dom-split}, exp_annotations: {summary: "NVLink domain dom-split has its GPUs in 2 cliques", action: "GPUs in different cliques cannot reach each other over NVLink: unless the domain is partitioned on purpose, check the fabric manager'"'"'s partition"}}]}'
} > "$G/rules_test.yml"
promtool test rules "$G/rules_test.yml" || exit 1
for a in $(sed -n '/name: gpufleet-fabric/,$p' "$G/gpufleet-rules.yml" | sed -n 's/^ *- alert: //p'); do
  grep -q "alertname: $a," "$G/rules_test.yml" || { echo "FAIL: fabric alert $a is not unit-tested"; exit 1; }
done

missing=0
for a in $(sed -n 's/^ *- alert: //p' "$D/gpufleet-rules.yml"); do
  if ! grep -q "alertname: $a, exp_alerts: \[\]}" "$D/rules_test.yml"; then
    echo "FAIL: alert $a is not in the healthy-node group of rules_test.yml"; missing=1
  fi
done
exit $missing
