#!/usr/bin/env bash
# The README's second command, and what .ci/run calls: install dependencies, build, and run every
# test: unit and end-to-end tests in the dev build (warnings as errors), the same tests under
# AddressSanitizer + UndefinedBehaviorSanitizer, and the formatting check.
# Environment: SKIP_ASAN=1 skips the sanitizer pass, SKIP_FUZZ=1 the fuzz smoke (local iteration
# only; CI runs both).
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/deps.sh

echo "== format check (clang-format $(clang-format --version | grep -o '[0-9][0-9.]*' | head -1))"
files=$(git ls-files '*.h' '*.cc' 2>/dev/null || find src tests perf -name '*.h' -o -name '*.cc')
if ! clang-format --dry-run -Werror $files; then
  echo "format: run clang-format -i on the files above" >&2
  exit 1
fi

echo "== dev build and tests (the packages among them: tests/package)"
scripts/build.sh dev
ctest --preset dev -j "$(nproc)"

if [[ "${SKIP_ASAN:-0}" != 1 ]]; then
  echo "== asan+ubsan build and tests"
  scripts/build.sh asan
  # The packages are built and tested from the dev build only. So is the calibration's
  # leave-one-source-out refit: a grid search that runs the same step model as every other
  # calibration test here, once per grid point and row (514 s under the sanitizers in CI).
  ctest --preset asan -j "$(nproc)" -LE package -E '^CalibrationTest\.LeaveOneSourceOut$'
fi

if [[ "${SKIP_FUZZ:-0}" != 1 ]]; then
  echo "== fuzz smoke (every target ${FUZZ_SECONDS:-15} s; a planted crash must fail it)"
  scripts/fuzz.sh smoke "${FUZZ_SECONDS:-15}"
fi
