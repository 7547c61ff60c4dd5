#!/usr/bin/env bash
# Fuzzing with libFuzzer (issue 7, scenario 6): the targets of tools/fuzz, in two passes, fails on any finding.
#
#   tools/fuzz.sh [--runs N] [--time S] [--asan-runs N] [--jobs J] [--only NAME] [--no-build] [--allow-short]
#
# 1. The fuzzing pass: the targets built with the fuzzer sanitizer alone (.build/fuzz), each run to --runs N
#    inputs (default 10,000,000; BREEZE_FUZZ_RUNS), stopped after --time S seconds (default 100;
#    BREEZE_FUZZ_CAP). Finds traps (Swift's bounds, overflow, unwrap and precondition checks), failed invariants
#    of the harnesses, hangs (-timeout) and memory blow-ups (-rss_limit_mb). A target stopped by the time cap
#    before N inputs fails as `short` (--allow-short only reports it).
# 2. The AddressSanitizer pass: the same targets built with the fuzzer and address sanitizers (.build/fuzz-asan),
#    run over the whole corpus the first pass kept (every input that reached new coverage), then on to
#    --asan-runs N inputs in all (default 200,000; BREEZE_FUZZ_ASAN_RUNS; 0 skips the pass; same time cap).
#    Finds what Swift's checks cannot: memory errors in Unsafe* code and at the C boundary (zlib, libsodium),
#    leaks (LeakSanitizer: retain cycles, unbalanced Unmanaged retains, C state never freed) and single
#    allocations beyond -malloc_limit_mb. It runs about 3 times slower, hence the smaller count.
# Each target runs with its own -max_len (inputs a little larger than its seeds: a header and a few rows for
# the parsers) and its own seeds: golden frames for frame and session, the events in them for event, the
# files of tools/fuzz/seeds/import (fixtures cut short) for the parsers, and the reproducers of fixed crashes
# (tools/fuzz/regressions/<target>/), replayed first. The corpus persists in .build/fuzz/corpus/<target>.
# Every run logs its seed; BREEZE_SEED=N reproduces a run (libFuzzer -seed). One line per target and pass:
#   FUZZ target=frame seed=... runs=... secs=... exec_per_s=... failure=none corpus=... sanitizer=none cpu_s=... exec_per_cpu_s=...
# (failure: none, crash, hang, leak, oom, slow (fewer than 10,000 inputs in the cap) or short; only crash, hang, leak
# and oom fail a run with --allow-short, as CI runs it: speed is a figure; exec_per_cpu_s is the one to compare on a
# shared machine)
# and at the end:
#   FAULT scenario=6 seed=... targets=... inputs=... min_per_target=... crashes=0 hangs=0 leaks=0 ... secs=...
# A failure leaves its reproducer in .build/fuzz/artifacts/<target>/.
set -euo pipefail
cd "$(dirname "$0")/.."

runs=${BREEZE_FUZZ_RUNS:-10000000}
time_limit=${BREEZE_FUZZ_CAP:-100}
asan_runs=${BREEZE_FUZZ_ASAN_RUNS:-200000}
jobs=2
only=""
build=1
allow_short=0
usage="usage: tools/fuzz.sh [--runs N] [--time S] [--asan-runs N] [--jobs J] [--only NAME] [--no-build] [--allow-short]"
while (($#)); do
  case $1 in
    --runs) runs=$2; shift 2 ;;
    --time) time_limit=$2; shift 2 ;;
    --asan-runs) asan_runs=$2; shift 2 ;;
    --jobs) jobs=$2; shift 2 ;;
    --only) only=$2; shift 2 ;;
    --no-build) build=0; shift ;;
    --allow-short) allow_short=1; shift ;;
    *) echo "$usage" >&2; exit 2 ;;
  esac
done
seed=${BREEZE_SEED:-$(( (RANDOM << 15 | RANDOM) + 1 ))}

if ! command -v swift >/dev/null 2>&1; then
  for d in /opt/swift/usr/bin /usr/share/swift/usr/bin; do [[ -x $d/swift ]] && export PATH="$d:$PATH" && break; done
fi
scratch=.build/fuzz
# SwiftPM 6.3 passes --sanitize only to the linker in release builds: ask the compiler explicitly too.
fast_flags=(-c release --sanitize fuzzer -Xswiftc -sanitize=fuzzer --scratch-path "$scratch")
asan_flags=(-c release --sanitize fuzzer --sanitize address -Xswiftc -sanitize=fuzzer,address --scratch-path .build/fuzz-asan)
mkdir -p "$scratch"
build_variant() {   # name, swift build flags...
  local name=$1; shift
  for p in fuzz-frame fuzz-session fuzz-event fuzz-import; do
    if ! BREEZE_FUZZ=1 swift build "$@" --product "$p" > "$scratch/build-$name-$p.log" 2>&1; then
      grep -E "error" "$scratch/build-$name-$p.log" | head -20; echo "building $p ($name) failed" >&2; exit 1
    fi
    tail -1 "$scratch/build-$name-$p.log"
  done
}
if ((build)); then
  echo "==> building fuzz targets (release, fuzzer sanitizer, $scratch)"
  build_variant fast "${fast_flags[@]}"
  if ((asan_runs > 0)); then
    echo "==> building fuzz targets (release, fuzzer + address sanitizers, .build/fuzz-asan)"
    build_variant asan "${asan_flags[@]}"
  fi
fi
bin=$(BREEZE_FUZZ=1 swift build "${fast_flags[@]}" --show-bin-path)
asan_bin=$(BREEZE_FUZZ=1 swift build "${asan_flags[@]}" --show-bin-path)

# Targets, slowest first so the last ones to start are short: name, binary, parser (for fuzz-import).
targets=(import-csv-chunks import-airnow-tech-csv import-airnow-api import-aqs import-airdata-daily
         import-daily-temperature import-purpleair-csv import-sensors-csv import-glucose-csv import-csv-table
         session import-openaq import-purpleair-json import-google-pollen import-gzip import-date event frame)

# Inputs a little larger than the seeds: every branch a parser has is reachable with a header and a few rows
# (tools/fuzz/seeds/import holds a header and up to four rows of each file in 1,024 bytes; a JSON response
# with two elements per array in 2,330), a script of a few dozen steps, the eleven golden frames (440 bytes).
max_len() {
  case $1 in
    import-purpleair-json|import-google-pollen|import-openaq|import-airnow-api|import-aqs|import-daily-temperature) echo 2560 ;;
    import-date) echo 64 ;;
    import-*) echo 1024 ;;
    *) echo 512 ;;
  esac
}

work=$scratch/work
rm -rf "$work"; mkdir -p "$work" "$scratch/artifacts"

# Seeds: golden frames (and a stream of all of them) for the frame and session targets, the events inside
# them for the event target, tools/fuzz/seeds/import for the parsers.
seed_corpus() {
  local name=$1 dir=$2
  mkdir -p "$dir"
  case $name in
    frame)
      for f in Protocol/golden/*.hex; do { printf '\x02\x00\x00'; xxd -r -p "$f"; } > "$dir/$(basename "$f" .hex)"; done
      { printf '\x02\x07\x00'; for f in Protocol/golden/*.hex; do xxd -r -p "$f"; done; } > "$dir/all" ;;
    session)
      printf '\x02\x01\x01\x02\x03\x05\x06\x00\x01\x02\x03' > "$dir/honest-server"
      printf '\x03\x06\x03\x01\x02\x03\x04\x05\x05\x01' > "$dir/honest-client"
      for f in Protocol/golden/*.hex; do
        local b; b=$(xxd -r -p "$f" | xxd -p -c 100000)
        # one raw message: step 0, length, type, payload (the frame without length and CRC)
        local len=$(( ${#b} / 2 - 9 )); (( len > 255 )) && len=255
        { printf '\x00\x00'; printf "\\x$(printf %02x "$len")"; printf '%s' "${b:8:$(( (len + 1) * 2 ))}" | xxd -r -p; } > "$dir/raw-$(basename "$f" .hex)"
      done ;;
    event)
      # the events frame carries events: offer its payload (mode 0) and each known type with an empty payload
      { printf '\x00'; xxd -r -p Protocol/golden/events.hex | tail -c +12 | head -c -4; } > "$dir/events-frame"
      for i in $(seq 0 20); do printf "\\x01\\x$(printf %02x "$i")\\x01" > "$dir/type-$i"; done ;;
    import-date)
      printf '\x00%s' 2023-10-22 > "$dir/d1"; printf '\x04%s' '2023-10-22T18:00:00-05:00' > "$dir/d2"
      printf '\x00%s' '10/22/2023' > "$dir/d3"; printf '\x00%s' '18:05:07' > "$dir/d4" ;;
    import-gzip)
      cp tools/fuzz/seeds/import/*.gz "$dir/"
      printf 'plain,not,gzip\n' > "$dir/plain" ;;
    import-csv-chunks)
      # byte 0 is the piece size less one: pieces of 8 and of 128 bytes
      for f in tools/fuzz/seeds/import/*.csv; do
        { printf '\x07'; cat "$f"; } > "$dir/8-$(basename "$f")"; { printf '\x7f'; cat "$f"; } > "$dir/128-$(basename "$f")"
      done ;;
    import-*)
      cp tools/fuzz/seeds/import/* "$dir/" ;;
  esac
}

run_target() {   # name, pass (fast or asan)
  local name=$1 pass=$2 binary dir parser="" target_runs=$runs
  dir=$bin; [[ $pass == asan ]] && dir=$asan_bin && target_runs=$asan_runs
  case $name in
    import-*) binary=$dir/fuzz-import; parser=${name#import-} ;;
    *) binary=$dir/fuzz-$name ;;
  esac
  # The corpus persists in .build/fuzz/corpus (each run starts where the last stopped); seeds are rebuilt.
  local corpus=$scratch/corpus/$name seeds=$work/$name/seeds art=$scratch/artifacts/$name/ log=$work/$name/log-$pass
  local regressions=tools/fuzz/regressions/$name     # reproducers of fixed crashes: replayed first, every run
  mkdir -p "$corpus" "$art" "$regressions"
  [[ -d $seeds ]] || seed_corpus "$name" "$seeds"
  local args=(-seed="$seed" -runs="$target_runs" -max_len="$(max_len "$name")" -timeout=10 -rss_limit_mb=2048
              -print_final_stats=1 -artifact_prefix="$art")
  local asan_options=""
  if [[ $pass == asan ]]; then
    args+=(-malloc_limit_mb=512 -detect_leaks=1)
    asan_options=detect_leaks=1:allocator_may_return_null=1
  fi
  ((time_limit > 0)) && args+=(-max_total_time="$time_limit")
  local start end status=0 TIMEFORMAT='%U %S'
  # Reproducers of fixed crashes, each run once as a whole file (a corpus directory would cut them to -max_len).
  local repro=("$regressions"/*)
  if [[ -e ${repro[0]} ]] && ! BREEZE_FUZZ_PARSER=$parser SWIFT_BACKTRACE=enable=no ASAN_OPTIONS=$asan_options \
      "$binary" -timeout=10 -rss_limit_mb=2048 "${repro[@]}" > "$log.regressions" 2>&1; then
    echo "FUZZ target=$name seed=$seed runs=0 secs=0 exec_per_s=0 failure=crash corpus=0 sanitizer=$([[ $pass == asan ]] && echo address || echo none) cpu_s=0 exec_per_cpu_s=0"
    echo "---- $name: a reproducer in $regressions fails again ($pass pass); log tail:"
    grep -v '^$' "$log.regressions" | tail -25
    return 1
  fi
  start=$(date +%s.%N)
  { time BREEZE_FUZZ_PARSER=$parser SWIFT_BACKTRACE=enable=no ASAN_OPTIONS=$asan_options \
      "$binary" "${args[@]}" "$corpus" "$seeds" "$regressions" > "$log" 2>&1 ; } 2> "$log.cpu" || status=$?
  end=$(date +%s.%N)
  # CPU seconds (user + system): on a shared machine, inputs per CPU second is the figure to compare.
  local cpu; cpu=$(awk '{ printf "%.1f", $1 + $2 }' "$log.cpu")
  local done_runs; done_runs=$(grep -o 'stat::number_of_executed_units: *[0-9]*' "$log" | grep -o '[0-9]*$' || echo 0)
  local secs; secs=$(awk -v a="$start" -v b="$end" 'BEGIN { printf "%.1f", b - a }')
  local rate; rate=$(awk -v r="${done_runs:-0}" -v s="$secs" 'BEGIN { printf "%d", (s > 0 ? r / s : 0) }')
  local kind=none
  if ((status != 0)); then
    kind=crash
    grep -q "ERROR: libFuzzer: timeout" "$log" && kind=hang
    grep -q "ERROR: LeakSanitizer" "$log" && kind=leak
    grep -q -E "out-of-memory|malloc\(.*\) exceeds" "$log" && kind=oom
  elif (( ${done_runs:-0} < target_runs && ${done_runs:-0} < min_runs )); then
    kind=slow      # reported; hangs are caught per input by -timeout
  elif (( ${done_runs:-0} < target_runs )); then
    kind=short
  fi
  local cpu_rate; cpu_rate=$(awk -v r="${done_runs:-0}" -v c="$cpu" 'BEGIN { printf "%d", (c > 0 ? r / c : 0) }')
  echo "FUZZ target=$name seed=$seed runs=${done_runs:-0} secs=$secs exec_per_s=$rate failure=$kind corpus=$(ls "$corpus" | wc -l) sanitizer=$([[ $pass == asan ]] && echo address || echo none) cpu_s=$cpu exec_per_cpu_s=$cpu_rate"
  if ((status != 0)); then
    echo "---- $name failed ($kind, $pass pass); reproducer in $art; log tail:"
    grep -v '^$' "$log" | grep -v -E '^#[0-9]+' | tail -25
    return 1
  fi
  if [[ $kind == slow ]]; then
    # A speed, not a fault: an input that hangs is caught by -timeout (failure=hang); a target that ran few
    # inputs on a machine busy with other work (or under AddressSanitizer) is reported, and does not fail.
    echo "---- $name: only ${done_runs:-0} inputs within the ${time_limit} s cap (fewer than $min_runs; reported, not a failure)"
  fi
  if [[ $kind == short ]]; then
    echo "---- $name: ${done_runs:-0} of $target_runs inputs within the ${time_limit} s cap ($rate per second)"
  fi
}

# One target: the fuzzing pass, then (if it found nothing) the AddressSanitizer pass over its corpus.
fuzz_target() {
  run_target "$1" fast || return 1
  if ((asan_runs > 0)); then run_target "$1" asan || return 1; fi
}

selected=()
for t in "${targets[@]}"; do [[ -z $only || $t == "$only" || $t == import-$only ]] && selected+=("$t"); done
echo "==> fuzzing ${#selected[@]} targets, ${runs} inputs each (at most ${time_limit} s each), then ${asan_runs} under AddressSanitizer; $jobs at a time, seed $seed"
export -f run_target fuzz_target seed_corpus max_len
min_runs=10000     # below this many inputs in the time cap a target is reported as `slow` (not a failure)
export bin asan_bin work scratch runs asan_runs time_limit seed min_runs
t0=$(date +%s)
set +e
printf '%s\n' "${selected[@]}" | xargs -P "$jobs" -I{} bash -c 'fuzz_target {}' | tee "$scratch/summary.txt"
set -e
t1=$(date +%s)
fast_lines() { grep '^FUZZ' "$scratch/summary.txt" | grep 'sanitizer=none' || true; }
asan_lines() { grep '^FUZZ' "$scratch/summary.txt" | grep 'sanitizer=address' || true; }
count() { grep '^FUZZ' "$scratch/summary.txt" | grep -c "failure=$1" || true; }
total=$( (fast_lines | grep -o ' runs=[0-9]*' || true) | awk -F= '{ s += $2 } END { print s + 0 }')
asan_total=$( (asan_lines | grep -o ' runs=[0-9]*' || true) | awk -F= '{ s += $2 } END { print s + 0 }')
min=$( (fast_lines | grep -o ' runs=[0-9]*' || true) | awk -F= 'NR == 1 || $2 < m { m = $2 } END { print m + 0 }')
short=$(count short)
slow=$(count slow)
not_none=$(grep '^FUZZ' "$scratch/summary.txt" | grep -c -v 'failure=none' || true)
failed=$((not_none - short - slow))     # crashes, hangs, leaks, out of memory: never speed
ran=$(fast_lines | wc -l)
missing=$(( ${#selected[@]} - ran ))
# A target whose fuzzing pass passed must have its AddressSanitizer line too (a killed pass leaves none).
if ((asan_runs > 0)); then
  passed_fast=$(fast_lines | grep -c -E 'failure=(none|short|slow)' || true)
  missing=$(( missing + passed_fast - $(asan_lines | wc -l) ))
fi
((allow_short)) || failed=$((failed + short + slow))
echo "FAULT scenario=6 seed=$seed targets=${#selected[@]} fired=$total inputs=$total min_per_target=$min lost=0 duplicated=0 unexpected=$((failed + missing)) crashes=$(count crash) hangs=$(count hang) leaks=$(count leak) oom=$(count oom) short=$short slow=$slow asan_inputs=$asan_total secs=$((t1 - t0))"
if ((short > 0)); then
  echo "==> short of $runs inputs within ${time_limit} s: $(grep '^FUZZ' "$scratch/summary.txt" | grep 'failure=short' | grep -o 'target=[^ ]*' | cut -d= -f2 | tr '\n' ' ')"
fi
((failed == 0 && missing == 0))
