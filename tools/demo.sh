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
echo "Done. The demo database is $BREEZE_DB; explore it with, for example:"
echo "  $breeze --db $BREEZE_DB state --json"
echo "  $breeze --db $BREEZE_DB log --stream user:ana"
