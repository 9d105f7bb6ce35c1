#!/usr/bin/env bash
# End-to-end check of the gpufleet binary.
# usage: check.sh EXIT STDERR_REGEX STDOUT_REGEX -- COMMAND [ARGS...]
# Passes when COMMAND exits with EXIT, its stderr matches STDERR_REGEX (extended regex; '' means
# stderr must be empty) and its stdout matches STDOUT_REGEX ('' means anything). '-' stands for ''
# (CMake drops empty arguments); '*' as STDERR_REGEX accepts any stderr. A usage or input
# error (EXIT 2) must be exactly one line on stderr.
set -uo pipefail
want_exit=$1 err_re=$2 out_re=$3
[[ "$err_re" == "-" ]] && err_re=""
any_err=0
[[ "$err_re" == "*" ]] && any_err=1
[[ "$out_re" == "-" ]] && out_re=""
shift 3
[[ "$1" == "--" ]] && shift
# Fixture-based tests: skip (77) where ../shared/fixtures is absent; in CI that is a failure.
if [[ -n "${GPUFLEET_FIXTURES:-}" && ! -d "$GPUFLEET_FIXTURES" ]]; then
  if [[ "${CI:-}" == "true" ]]; then echo "FAIL: CI without $GPUFLEET_FIXTURES"; exit 1; fi
  echo "SKIP: $GPUFLEET_FIXTURES is absent (real-machine fixtures live beside the repository)"
  exit 77
fi
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
"$@" >"$tmp/out" 2>"$tmp/err"
got=$?
fail() { echo "FAIL: $*"; echo "--- command: $*"; echo "--- stderr:"; cat "$tmp/err"; echo "--- stdout (head):"; head -20 "$tmp/out"; exit 1; }
[[ $got == "$want_exit" ]] || fail "exit $got, want $want_exit"
if [[ $any_err == 1 ]]; then
  :
elif [[ -z "$err_re" ]]; then
  [[ ! -s "$tmp/err" ]] || fail "stderr not empty"
else
  grep -Eq -- "$err_re" "$tmp/err" || fail "stderr does not match /$err_re/"
fi
if [[ $want_exit == 2 ]]; then
  lines=$(wc -l <"$tmp/err")
  [[ $lines == 1 ]] || fail "stderr has $lines lines, want exactly 1"
fi
if [[ -n "$out_re" ]]; then
  grep -Eq -- "$out_re" "$tmp/out" || fail "stdout does not match /$out_re/"
fi
echo "ok: exit $got"
