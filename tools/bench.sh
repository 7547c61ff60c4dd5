#!/usr/bin/env bash
# Every benchmark, with the comparisons: installs what is missing (the Debian packages Breeze builds against,
# node-yjs for Yjs, a Python venv under .build/bench-venv with Loro, pycrdt and eventsourcing), builds in
# release mode and runs `breeze-bench all` (tools/breeze-bench). Arguments go to `breeze-bench all`, for example:
#   bash tools/bench.sh --write BENCHMARKS.md        # the tables, also written to BENCHMARKS.md
#   bash tools/bench.sh --runs 1 --sync-count 100000 # a quicker look
set -euo pipefail
cd "$(dirname "$0")/.."
source tools/setup.sh
breeze_setup

# Versions measured in BENCHMARKS.md; pinned so a re-run compares the same thing.
python_packages=(loro==1.17.1 pycrdt==0.14.13 eventsourcing==9.5.6)
venv=.build/bench-venv

sudo=()
[[ $(id -u) -eq 0 ]] || sudo=(sudo)
if ! dpkg-query -W -f='${Status}' node-yjs 2>/dev/null | grep -q "install ok installed"; then
  echo "==> installing node-yjs (Debian)"
  "${sudo[@]}" apt-get update -qq
  DEBIAN_FRONTEND=noninteractive "${sudo[@]}" apt-get install -y -qq node-yjs >/dev/null
fi
command -v node >/dev/null 2>&1 || { echo "error: node is not on PATH (Yjs runs under Node)" >&2; exit 1; }
command -v python3 >/dev/null 2>&1 || { echo "error: python3 is not on PATH" >&2; exit 1; }
if ! python3 -c 'import venv, ensurepip' 2>/dev/null; then
  echo "==> installing python3-venv (Debian)"
  "${sudo[@]}" apt-get update -qq
  DEBIAN_FRONTEND=noninteractive "${sudo[@]}" apt-get install -y -qq python3-venv >/dev/null
fi
if ! "$venv/bin/python" -c 'import loro, pycrdt, eventsourcing' 2>/dev/null; then
  echo "==> creating $venv with ${python_packages[*]} (PyPI)"
  mkdir -p .build
  python3 -m venv "$venv"
  "$venv/bin/pip" install -q "${python_packages[@]}"
fi

echo "==> building (release)"
swift build -c release --product breeze
swift build -c release --product breeze-bench
bin=$(swift build -c release --show-bin-path)
echo "==> breeze-bench all $*"
"$bin/breeze-bench" all --python "$venv/bin/python" "$@"
