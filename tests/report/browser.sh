#!/bin/bash
# Every HTML report in a real browser: Debian's headless Chromium opens each one at 1,400 px and
# at 400 px wide, and layout_check.js measures what it laid out: no two text elements of a chart
# overlap, no text sticks out of its SVG, and the page does not scroll sideways outside a table's
# own scroll box. A page with a planted overlap must fail (the check can fail). Reports: plan,
# sim step (with a sweep), sim goodput (with an interval scan), bench collective and pairs (under
# a real mpirun, 4 ranks on loopback), bench storage. With --screenshots DIR, also writes a
# 1,400 px screenshot of each to DIR (docs/images: scripts/screenshots.sh).
# usage: browser.sh GPUFLEET_BINARY REPO_ROOT [--screenshots DIR].  Skips (77) without Chromium or
# mpirun unless CI=true.
set -uo pipefail
BIN=$1 ROOT=$2 SHOTS=
[ "${3:-}" = --screenshots ] && SHOTS=$4
CHROMIUM=$(command -v chromium || command -v chromium-browser || true)
for tool in "$CHROMIUM" mpirun python3; do
  if [ -z "$tool" ] || ! command -v "$tool" > /dev/null; then
    if [ "${CI:-}" = true ]; then echo "FAIL: ${tool:-chromium} is not installed (scripts/deps.sh)"; exit 1; fi
    echo "SKIP: ${tool:-chromium} is not installed (run scripts/deps.sh)"; exit 77
  fi
done
T=$(mktemp -d /tmp/gpufleet-browser.XXXXXX)
trap 'rm -rf "$T"' EXIT
trap 'exit 130' INT TERM
fail() { echo "FAIL: $*"; exit 1; }

# Chromium: headless, nothing fetched, its profile in the scratch folder; as root it needs
# --no-sandbox (CI runs as root).
browser() {
  timeout 120 "$CHROMIUM" --headless=new --no-sandbox --disable-gpu --disable-dev-shm-usage \
    --no-first-run --no-default-browser-check --disable-extensions --disable-sync \
    --disable-background-networking --hide-scrollbars --user-data-dir="$T/profile" \
    --virtual-time-budget=3000 "$@" 2> "$T/chromium.err"
}

# The reports.
"$BIN" plan --format html -o "$T/plan.html" || fail "plan --format html"
"$BIN" sim step --format html --sweep gpus=8..1024 -o "$T/sim-step.html" || fail "sim step html"
"$BIN" sim goodput --format html --trials 20 --scan 7 -o "$T/sim-goodput.html" ||
  fail "sim goodput html"
. "$(dirname "$0")/../ompi_env.sh"
export "${OMPI_TEST_ENV[@]}"
export OMPI_MCA_mpi_yield_when_idle=1
export ASAN_OPTIONS=${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0
timeout 120 mpirun -np 4 "$BIN" bench collective -b 1K -e 16M -f 4 -w 1 -n 3 \
  --expect-busbw "2 GB/s" --format html -o "$T/bench-collective.html" > "$T/out" 2>&1 ||
  [ -s "$T/bench-collective.html" ] || { cat "$T/out"; fail "bench collective html"; }
timeout 120 mpirun -np 4 "$BIN" bench pairs --size 256K -n 5 --fraction 0.5 \
  --format html -o "$T/bench-pairs.html" > "$T/out" 2>&1 ||
  [ -s "$T/bench-pairs.html" ] || { cat "$T/out"; fail "bench pairs html"; }
mkdir -p "$T/storage"
"$BIN" bench storage --path "$T/storage" --size 16M --checkpoint-size 16M --shards 2 --fsyncs 10 \
  --format html -o "$T/bench-storage.html" > "$T/out" 2>&1 ||
  [ -s "$T/bench-storage.html" ] || { cat "$T/out"; fail "bench storage html"; }
rm -rf "$T/storage"

# check FILE WIDTH: the layout verdict of FILE at WIDTH px; prints the problems; 1 if any.
check() {
  local page=$1 width=$2 copy
  copy="$T/check-$(basename "$page" .html)-$width.html"
  python3 - "$page" "$ROOT/tests/report/layout_check.js" "$copy" <<'P'
import sys
page, script, out = sys.argv[1:]
html = open(page, encoding="utf-8").read()
assert "<script" not in html, f"{page} carries a script"
js = open(script, encoding="utf-8").read()
open(out, "w", encoding="utf-8").write(html.replace("</body>", "<script>\n" + js + "</script>\n</body>"))
P
  browser --window-size="$width,2000" --dump-dom "file://$copy" > "$copy.dom" ||
    { cat "$T/chromium.err"; fail "chromium could not open $page"; }
  python3 - "$copy.dom" "$page" "$width" <<'P'
import html, json, re, sys
dom, page, width = sys.argv[1:]
# The last match: the injected script's own comment names the element too.
found = re.findall(r'<pre id="gpufleet-layout-check">(\{.*?)</pre>', open(dom, encoding="utf-8").read(), re.S)
if not found:
    print(f"FAIL: {page} at {width} px: the layout check did not run")
    sys.exit(1)
v = json.loads(html.unescape(found[-1]))
for p in v["problems"]:
    print(f"  {page} at {width} px: {p}")
print(f"{'ok  ' if not v['problems'] else 'FAIL'} {page.split('/')[-1]} at {width} px: "
      f"{v['charts']} charts, {v['texts']} text elements, {len(v['problems'])} problems")
sys.exit(1 if v["problems"] else 0)
P
}

failed=0
for page in "$T"/*.html; do
  case $page in */check-*) continue ;; esac
  for width in 1400 400; do check "$page" "$width" || failed=1; done
done

# The check can fail: two labels planted on top of each other, and a fixed-width box too wide
# for 400 px.
cat > "$T/planted.html" <<'H'
<!DOCTYPE html><html><head><meta name="viewport" content="width=device-width"></head><body>
<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 300 100" width="300" aria-label="planted">
<text x="10" y="50">overlapping label</text><text x="30" y="52">another label</text></svg>
<div style="width:900px">too wide</div></body></html>
H
if check "$T/planted.html" 400 > "$T/planted.out"; then
  cat "$T/planted.out"; fail "the planted overlap passed: the check cannot fail"
fi
grep -q 'overlap: "overlapping label" and "another label"' "$T/planted.out" &&
  grep -q 'scrolls sideways' "$T/planted.out" ||
  { cat "$T/planted.out"; fail "the planted faults were not both named"; }
echo "ok   the planted overlap and sideways scroll are caught"

if [ -n "$SHOTS" ]; then
  mkdir -p "$SHOTS"
  for page in plan sim-step sim-goodput bench-collective bench-pairs; do
    browser --window-size=1400,1800 --screenshot="$SHOTS/$page.png" "file://$T/$page.html" > /dev/null ||
      fail "screenshot of $page"
    echo "wrote $SHOTS/$page.png"
  done
fi
exit $failed
