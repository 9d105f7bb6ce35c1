#!/bin/bash
# `gpufleet bench storage` on a real filesystem: every test reports, JSON for the agent, the
# checkpoint judged against its budget, bad input refused, nothing left behind -- also when
# interrupted by SIGTERM or SIGINT mid-run. usage: bench_storage.sh GPUFLEET_BINARY
set -uo pipefail
BIN=$1
T=$(mktemp -d /tmp/gpufleet-bench-storage.XXXXXX)
trap 'rm -rf "$T"' EXIT
fail() { echo "FAIL: $*"; exit 1; }
jqx() { python3 -c "import json,sys; d=json.load(open(sys.argv[1])); $2" "$1"; }
mkdir "$T/dir" "$T/out"
empty() { [ -z "$(ls -A "$T/dir")" ]; }

"$BIN" bench storage --path "$T/dir" --size 64M --checkpoint-size 32M --shards 4 --fsyncs 20 \
  --random-seconds 0.5 --metadata-files 200 --format json -o "$T/out/s.json" || fail "storage run"
jqx "$T/out/s.json" '
ops = {r["op"]: r for r in d["results"]}
assert set(ops) == {"sequential_write","sequential_read","random_read_4k","fsync","metadata","checkpoint"}, ops
assert ops["sequential_write"]["throughput_bytes_per_s"] > 0 and ops["sequential_read"]["throughput_bytes_per_s"] > 0
assert ops["random_read_4k"]["iops"] > 0 and ops["fsync"]["latency"]["p99_s"] > 0
assert ops["checkpoint"]["bytes"] == 32 << 20 and ops["checkpoint"]["shards"] == 4
assert d["schema"] == "gpufleet.bench/v1" and d["kind"] == "storage"' || fail "storage json"
empty || fail "files left behind after a run"

# A budget the checkpoint cannot meet: exit 1, the finding names it.
"$BIN" bench storage --path "$T/dir" --size 16M --checkpoint-size 16M --budget 0.000001 \
  --random-seconds 0.2 --fsyncs 5 --metadata-files 10 > "$T/out/b.txt"; rc=$?
[ $rc = 1 ] && grep -q '^# fail: checkpoint of 16.0 MiB in 8 shards took .*, over the' "$T/out/b.txt" ||
  { cat "$T/out/b.txt"; fail "budget: exit $rc"; }
empty || fail "files left behind after a failed verdict"

# Bad input: exit 2; not enough space: exit 3; both one line, nothing created.
"$BIN" bench storage --path "$T/nope" 2> "$T/out/e"; rc=$?
[ $rc = 2 ] && grep -q "^gpufleet: --path $T/nope: not a folder$" "$T/out/e" || fail "missing dir: $rc"
"$BIN" bench storage --path "$T/dir" --block-size 1000 2> "$T/out/e"; rc=$?
[ $rc = 2 ] && grep -q "^gpufleet: --block-size: want a multiple of 4 KiB" "$T/out/e" || fail "block size: $rc"
"$BIN" bench storage --path "$T/dir" --size 900T 2> "$T/out/e"; rc=$?
[ $rc = 3 ] && grep -q "needs .* free for the tests, has" "$T/out/e" || fail "free space: $rc"
empty || fail "files left behind after bad input"

# Interrupted mid-run: the files go, exit 128+signal.
for sig in TERM INT; do
  "$BIN" bench storage --path "$T/dir" --size 512M --random-seconds 30 2> "$T/out/e" > /dev/null &
  pid=$!
  for i in $(seq 50); do [ -n "$(ls -A "$T/dir")" ] && break; sleep 0.05; done
  sleep 0.3
  kill -$sig $pid
  wait $pid; rc=$?
  want=$((128 + $(kill -l $sig)))
  [ $rc = $want ] || fail "SIG$sig: exit $rc, want $want"
  grep -q "interrupted by signal" "$T/out/e" || fail "SIG$sig: no message"
  empty || { ls -la "$T/dir"; fail "SIG$sig: files left behind"; }
done
echo PASS
