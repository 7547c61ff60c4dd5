#!/usr/bin/env bash
# The main job: builds Breeze in release mode (installing what is missing) and takes a short scripted tour
# of the `breeze` CLI on the demo database, demo/breeze.db (recreated on every run).
set -euo pipefail
cd "$(dirname "$0")/.."
source tools/setup.sh
breeze_setup
echo "==> building breeze (release)"
swift build -c release --product breeze 2>&1 | tail -n 1
breeze="$(swift build -c release --show-bin-path)/breeze"

demo_dir="$PWD/demo"
rm -rf "$demo_dir"
export BREEZE_DB="$demo_dir/breeze.db"
step() { printf '\n\033[1m$ breeze %s\033[0m\n' "$*"; "$breeze" "$@"; }

echo "==> tour on $BREEZE_DB"
step init
step favourite add 131075
step favourite add AQS-370630099
step watch add 131075
step alert set --category unhealthy --on-clear notify
step unit set fahrenheit
step source correct purpleair epa-2021-smoke
step favourite remove AQS-370630099
step --user ana favourite add 131075
step state
step log
step log --json --limit 2
printf '\n\033[1m$ breeze unit set kelvin\033[0m   (bad input: a clear error, exit 1, nothing stored)\n'
"$breeze" unit set kelvin || echo "(exit $?)"
step bench append --count 100000

echo
echo "==> replication: a second replica (a phone) syncs with this one over TCP"
"$breeze" secret new > "$demo_dir/cluster.key"
"$breeze" init --db "$demo_dir/phone.db" >/dev/null
pids=()
cleanup() { for p in "${pids[@]}"; do kill -TERM "$p" 2>/dev/null || true; done; wait 2>/dev/null || true; }
trap cleanup EXIT INT TERM
"$breeze" node --db "$BREEZE_DB" --listen 127.0.0.1:0 --secret-file "$demo_dir/cluster.key" \
  > "$demo_dir/server.out" 2> "$demo_dir/server.log" & pids+=($!)
for _ in $(seq 50); do grep -q "listening on" "$demo_dir/server.out" 2>/dev/null && break; sleep 0.1; done
addr=$(sed -n 's/^listening on //p' "$demo_dir/server.out")
"$breeze" node --db "$demo_dir/phone.db" --peer "$addr" --secret-file "$demo_dir/cluster.key" \
  > "$demo_dir/phone.out" 2> "$demo_dir/phone.log" & pids+=($!)
step --db "$demo_dir/phone.db" favourite add 149970
hash() { "$breeze" --db "$1" state --json | sed 's/.*"stateHash":"\([0-9a-f]*\)".*/\1/'; }
for _ in $(seq 100); do [[ $(hash "$BREEZE_DB") == $(hash "$demo_dir/phone.db") ]] && break; sleep 0.1; done
for db in "$BREEZE_DB" "$demo_dir/phone.db"; do
  printf '%-40s state hash %s\n' "$db" "$(hash "$db")"
done
sleep 1.5   # the node refreshes what `status` shows once a second
step status
cleanup
trap - EXIT INT TERM
echo
echo "Done. The demo database is $BREEZE_DB; explore it with, for example:"
echo "  $breeze --db $BREEZE_DB state --json"
echo "  $breeze --db $BREEZE_DB log --stream user:ana"
echo "  $breeze --db $demo_dir/phone.db status"
