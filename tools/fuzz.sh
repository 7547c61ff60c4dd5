#!/usr/bin/env bash
# Fuzzing with libFuzzer (issue 7, scenario 6). Builds the targets in tools/fuzz with the fuzzer and address
# sanitizers (so leaks are detected) into .build/fuzz, seeds each corpus from the real fixtures and golden
# frames, and runs every target; fails on any crash, hang (-timeout), leak or memory blow-up (-rss_limit_mb,
# -malloc_limit_mb), leaving the reproducer in .build/fuzz/artifacts/<target>/.
#
#   tools/fuzz.sh [--runs N] [--time S] [--jobs J] [--only NAME] [--no-build]
#
# --runs N: inputs per target (default 10,000,000; BREEZE_FUZZ_RUNS); --time S: stop each target after S
# seconds instead (whichever comes first when both are given); --jobs J: targets run at once (default 2).
# Every run logs its seed; BREEZE_SEED=N reproduces a run (libFuzzer -seed). One line per target:
#   FUZZ target=frame seed=... runs=... secs=... exec_per_s=... crashes=0 corpus=...
# and at the end: FAULT scenario=6 seed=... targets=... inputs=... crashes=0 hangs=0 leaks=0
set -euo pipefail
cd "$(dirname "$0")/.."

runs=${BREEZE_FUZZ_RUNS:-10000000}
time_limit=0
jobs=2
only=""
build=1
while (($#)); do
  case $1 in
    --runs) runs=$2; shift 2 ;;
    --time) time_limit=$2; shift 2 ;;
    --jobs) jobs=$2; shift 2 ;;
    --only) only=$2; shift 2 ;;
    --no-build) build=0; shift ;;
    *) echo "usage: tools/fuzz.sh [--runs N] [--time S] [--jobs J] [--only NAME] [--no-build]" >&2; exit 2 ;;
  esac
done
seed=${BREEZE_SEED:-$(( (RANDOM << 15 | RANDOM) + 1 ))}

if ! command -v swift >/dev/null 2>&1; then
  for d in /opt/swift/usr/bin /usr/share/swift/usr/bin; do [[ -x $d/swift ]] && export PATH="$d:$PATH" && break; done
fi
scratch=.build/fuzz
# SwiftPM 6.3 passes --sanitize only to the linker in release builds: ask the compiler explicitly too.
flags=(-c release --sanitize fuzzer --sanitize address -Xswiftc -sanitize=fuzzer,address --scratch-path "$scratch")
mkdir -p "$scratch"
if ((build)); then
  echo "==> building fuzz targets (release, fuzzer + address sanitizers, $scratch)"
  for p in fuzz-frame fuzz-session fuzz-event fuzz-import; do
    if ! BREEZE_FUZZ=1 swift build "${flags[@]}" --product "$p" > "$scratch/build-$p.log" 2>&1; then
      grep -E "error" "$scratch/build-$p.log" | head -20; echo "building $p failed" >&2; exit 1
    fi
    tail -1 "$scratch/build-$p.log"
  done
fi
bin=$(BREEZE_FUZZ=1 swift build "${flags[@]}" --show-bin-path)

# Targets: name, binary, parser (for fuzz-import), seed files.
fixtures=Tests/BreezeImportTests/Fixtures
targets=(frame session event)
parsers=(purpleair-csv purpleair-json sensors-csv airnow-tech-csv airnow-api aqs airdata-daily openaq google-pollen
         daily-temperature glucose-csv csv-table csv-chunks date gzip)
for p in "${parsers[@]}"; do targets+=("import-$p"); done

work=$scratch/work
rm -rf "$work"; mkdir -p "$work" "$scratch/artifacts"

# Seeds: golden frames (and a stream of all of them) for the frame and session targets, the events inside
# them for the event target, the real files (cut to the input size limit) for the parsers.
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
      cp "$fixtures/biomarker/bokeh_sampledata_CGM.csv.gz" "$dir/" ;;
    import-csv-chunks)
      local i=0
      find "$fixtures" -name '*.csv' | sort | while read -r f; do i=$((i + 1)); { printf '\x40'; head -c 4000 "$f"; } > "$dir/f$i"; done ;;
    import-*)
      local i=0
      find "$fixtures" -type f \( -name '*.csv' -o -name '*.json' \) | sort | while read -r f; do
        i=$((i + 1)); head -c 4096 "$f" > "$dir/f$i"
      done ;;
  esac
}

run_target() {
  local name=$1 binary parser=""
  case $name in
    import-*) binary=$bin/fuzz-import; parser=${name#import-} ;;
    *) binary=$bin/fuzz-$name ;;
  esac
  # The corpus persists in .build/fuzz/corpus (each run starts where the last stopped); seeds are rebuilt.
  local corpus=$scratch/corpus/$name seeds=$work/$name/seeds art=$scratch/artifacts/$name/
  local regressions=tools/fuzz/regressions/$name     # reproducers of fixed crashes: replayed first, every run
  mkdir -p "$corpus" "$art" "$regressions"
  seed_corpus "$name" "$seeds"
  local args=(-seed="$seed" -runs="$runs" -max_len=4096 -timeout=10 -rss_limit_mb=2048 -malloc_limit_mb=512
              -detect_leaks=1 -print_final_stats=1 -artifact_prefix="$art")
  ((time_limit > 0)) && args+=(-max_total_time="$time_limit")
  local start end status=0
  start=$(date +%s.%N)
  BREEZE_FUZZ_PARSER=$parser SWIFT_BACKTRACE=enable=no ASAN_OPTIONS=detect_leaks=1:allocator_may_return_null=1 \
    "$binary" "${args[@]}" "$corpus" "$seeds" "$regressions" > "$work/$name/log" 2>&1 || status=$?
  end=$(date +%s.%N)
  local done_runs; done_runs=$(grep -o 'stat::number_of_executed_units: *[0-9]*' "$work/$name/log" | grep -o '[0-9]*$' || echo 0)
  local secs; secs=$(awk -v a="$start" -v b="$end" 'BEGIN { printf "%.1f", b - a }')
  local rate; rate=$(awk -v r="${done_runs:-0}" -v s="$secs" 'BEGIN { printf "%d", (s > 0 ? r / s : 0) }')
  local kind=none
  if ((status != 0)); then
    kind=crash
    grep -q "ERROR: libFuzzer: timeout" "$work/$name/log" && kind=hang
    grep -q "LeakSanitizer" "$work/$name/log" && kind=leak
    grep -q -E "out-of-memory|malloc\(.*\) exceeds" "$work/$name/log" && kind=oom
  fi
  echo "FUZZ target=$name seed=$seed runs=${done_runs:-0} secs=$secs exec_per_s=$rate failure=$kind corpus=$(ls "$corpus" | wc -l)"
  if ((status != 0)); then
    echo "---- $name failed ($kind); reproducer in $art; log tail:"
    grep -v '^$' "$work/$name/log" | grep -v -E '^#[0-9]+' | tail -25
    return 1
  fi
}

selected=()
for t in "${targets[@]}"; do [[ -z $only || $t == "$only" || $t == import-$only ]] && selected+=("$t"); done
echo "==> fuzzing ${#selected[@]} targets, ${runs} inputs each$( ((time_limit > 0)) && echo " (at most ${time_limit} s each)"), $jobs at a time, seed $seed"
export -f run_target seed_corpus
export bin work scratch fixtures runs time_limit seed
t0=$(date +%s)
set +e
printf '%s\n' "${selected[@]}" | xargs -P "$jobs" -I{} bash -c 'run_target {}' | tee "$scratch/summary.txt"
set -e
t1=$(date +%s)
failed=$(grep -c -v 'failure=none' <(grep '^FUZZ' "$scratch/summary.txt") || true)
total=$(grep '^FUZZ' "$scratch/summary.txt" | grep -o ' runs=[0-9]*' | awk -F= '{ s += $2 } END { print s + 0 }')
min=$(grep '^FUZZ' "$scratch/summary.txt" | grep -o ' runs=[0-9]*' | awk -F= 'NR == 1 || $2 < m { m = $2 } END { print m + 0 }')
count() { grep '^FUZZ' "$scratch/summary.txt" | grep -c "failure=$1" || true; }
echo "FAULT scenario=6 seed=$seed targets=${#selected[@]} fired=$total inputs=$total min_per_target=$min lost=0 duplicated=0 unexpected=$failed crashes=$(count crash) hangs=$(count hang) leaks=$(count leak) oom=$(count oom) secs=$((t1 - t0))"
((failed == 0))
