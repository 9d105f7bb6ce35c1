#!/usr/bin/env bash
# `gpufleet emit daemonset` against the published Kubernetes and Prometheus Operator schemas
# (tests/k8s/validate.mjs, strict about unknown fields), for the reference cluster, the 1,024-GPU
# example and an agent behind TLS and basic auth; and proof that the check can fail: a manifest
# with a wrong type and two misspelt fields must be refused.
# Usage: k8s_manifests.sh GPUFLEET SOURCE_DIR
set -euo pipefail
BIN=$1
SRC=$2
fail() { echo "FAIL: $*" >&2; exit 1; }
command -v node > /dev/null || fail "node is not installed (scripts/deps.sh)"
[[ -d $SRC/tests/k8s/node_modules/kubernetes-models ]] ||
  fail "the schema packages are not installed: run scripts/deps.sh"
WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT
"$BIN" emit daemonset -o "$WORK/reference.yaml"
"$BIN" emit daemonset "$SRC/examples/h100-1024gpu.yaml" --namespace monitoring \
  --agent-image registry.example/gpufleet:1.2.3 --agent-port 9500 -o "$WORK/h100.yaml"
"$BIN" emit daemonset --agent-scheme https --agent-user prometheus -o "$WORK/tls.yaml"
node "$SRC/tests/k8s/validate.mjs" "$WORK/reference.yaml" "$WORK/h100.yaml" "$WORK/tls.yaml" ||
  fail "an emitted manifest does not validate"
grep -q 'basicAuth' "$WORK/tls.yaml" && grep -q 'tlsConfig' "$WORK/tls.yaml" ||
  fail "the https variant has no tlsConfig or basicAuth"
sed 's/hostPID: true/hostPID: "yes"/; s/dnsPolicy:/dnsPolcy:/; s/targetLabel: node/targetLabl: node/' \
  "$WORK/reference.yaml" > "$WORK/planted.yaml"
if node "$SRC/tests/k8s/validate.mjs" "$WORK/planted.yaml" > "$WORK/planted.out"; then
  fail "the planted errors passed validation"
fi
for want in "hostPID must be boolean" "dnsPolcy: not a field of PodSpec" \
  "targetLabl: not a field of RelabelConfig"; do
  grep -qF "$want" "$WORK/planted.out" || { cat "$WORK/planted.out"; fail "not reported: $want"; }
done
echo "PASS: 9 objects valid; the planted errors refused"
