#!/usr/bin/env bash
# The whole test suite: installs what is missing, builds every target, runs every test.
set -euo pipefail
cd "$(dirname "$0")/.."
source tools/setup.sh
breeze_setup
echo "==> building (debug, with tests)"
swift build --build-tests
echo "==> testing"
set +e
swift test --skip-build 2>&1 | tee .build/test-output.txt
status=${PIPESTATUS[0]}
set -e
if [[ $status -ne 0 ]]; then
  echo "==> FAILED (exit $status); failing tests:"
  grep -E '✘' .build/test-output.txt | head -50 || true
fi
# Fault tier, fuzzing (issue 7, scenario 6): every libFuzzer target for BREEZE_FUZZ_TIME seconds (default 15),
# two at a time; BREEZE_FUZZ_TIME=0 skips it. The other scenarios' FAULT lines are in the test output above.
if [[ ${BREEZE_FUZZ_TIME:-15} != 0 ]]; then
  echo "==> fuzzing (tools/fuzz.sh)"
  set +e
  bash tools/fuzz.sh --time "${BREEZE_FUZZ_TIME:-15}" 2>&1 | tee .build/fuzz-output.txt
  fuzz_status=${PIPESTATUS[0]}
  set -e
  ((status == 0)) && status=$fuzz_status
fi
echo "==> fault scenarios"
grep -h '^FAULT ' .build/test-output.txt .build/fuzz-output.txt 2>/dev/null || true
exit "$status"
