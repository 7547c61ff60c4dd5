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
exit "$status"
