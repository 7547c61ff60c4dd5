#!/usr/bin/env bash
# The whole test suite: installs what is missing (the build's packages and Chromium for the inspector's page
# tests), builds every target, runs every test.
set -euo pipefail
cd "$(dirname "$0")/.."
source tools/setup.sh
breeze_setup "${breeze_test_packages[@]}"
echo "==> building (debug, with tests)"
swift build --build-tests
echo "==> building Examples/Favourites (an app's package depending on this one; ExampleTests runs it)"
swift build --package-path Examples/Favourites
echo "==> testing"
set +e
swift test --skip-build 2>&1 | tee .build/test-output.txt
status=${PIPESTATUS[0]}
set -e
if [[ $status -ne 0 ]]; then
  echo "==> FAILED (exit $status); failing tests:"
  grep -E '✘' .build/test-output.txt | head -50 || true
  # A crash (a trap, a signal) ends the run without a ✘ line: name the tests that started and never ended.
  python3 - .build/test-output.txt <<'PY' || true
import re, sys
started, ended = [], set()
for line in open(sys.argv[1], errors="replace"):
    m = re.match(r"◇ Test (.+?) started\.", line)
    if m: started.append(m.group(1))
    m = re.match(r"[✔✘] Test (.+?) (passed|failed|recorded)", line)
    if m: ended.add(m.group(1))
running = [t for t in started if t not in ended]
if running:
    print("==> tests that started and did not end (running when the process stopped):")
    for t in running[-20:]: print("   ", t)
PY
fi
# Fault tier, fuzzing (issue 7, scenario 6): every libFuzzer target to 10,000,000 inputs, at most
# BREEZE_FUZZ_TIME seconds each (default 30 here, so the whole CI tier stays well under 30 minutes on 2 cores),
# two at a time, then an AddressSanitizer pass over each corpus; BREEZE_FUZZ_TIME=0 skips it. On 2 cores no
# target reaches 10,000,000 inputs in that time (that takes about 53 minutes of both cores for the 18 targets,
# `bash tools/fuzz.sh` by hand); a target stopped short is reported (`failure=short`, and the FAULT line's
# short=) but does not fail the run: --allow-short.
# The seed comes from the commit (its first 7 hex digits), so a clean-clone run of a commit uses the same seed
# as the CI run of that commit: from the same empty corpus they try the same inputs in the same order, as far
# as each gets within the time cap. Every commit explores new ones.
# BREEZE_FUZZ_SEED overrides it; `bash tools/fuzz.sh` by hand draws a random seed (BREEZE_SEED).
if [[ ${BREEZE_FUZZ_TIME:-30} != 0 ]]; then
  if [[ -n ${BREEZE_FUZZ_SEED:-} ]]; then fuzz_seed=$BREEZE_FUZZ_SEED
  elif head=$(git rev-parse HEAD 2>/dev/null); then fuzz_seed=$(( 16#${head:0:7} + 1 ))
  else fuzz_seed=$(( (RANDOM << 15 | RANDOM) + 1 )); fi
  echo "==> fuzzing (tools/fuzz.sh, seed $fuzz_seed)"
  set +e
  BREEZE_SEED=$fuzz_seed bash tools/fuzz.sh --time "${BREEZE_FUZZ_TIME:-30}" --allow-short 2>&1 | tee .build/fuzz-output.txt
  fuzz_status=${PIPESTATUS[0]}
  set -e
  ((status == 0)) && status=$fuzz_status
fi
echo "==> fault scenarios"
grep -h '^FAULT ' .build/test-output.txt .build/fuzz-output.txt 2>/dev/null || true
exit "$status"
