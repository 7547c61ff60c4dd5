#!/usr/bin/env bash
# Installs the Debian packages Breeze builds against, when missing (with sudo when not root), and checks
# that the Swift toolchain is on PATH. Sourced by tools/demo.sh and tools/test.sh.
set -euo pipefail

# tzdata: the IANA time-zone database (/usr/share/zoneinfo) the screens read local days and hours from.
breeze_packages=(libsqlite3-dev libuv1-dev libsodium-dev zlib1g-dev libmicrohttpd-dev libcurl4-openssl-dev pkg-config tzdata)
# What the test suite needs beyond the build: a real headless browser for the inspector's page tests
# (Tests/BreezeInspectTests). tools/test.sh installs them: `breeze_setup chromium`.
breeze_test_packages=(chromium)

# breeze_setup [EXTRA_PACKAGE...]: the build's packages and any extra ones.
breeze_setup() {
  local missing=()
  for p in "${breeze_packages[@]}" "$@"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
  done
  if ((${#missing[@]})); then
    echo "==> installing missing Debian packages: ${missing[*]}"
    local sudo=()
    [[ $(id -u) -eq 0 ]] || sudo=(sudo)
    "${sudo[@]}" apt-get update -qq
    DEBIAN_FRONTEND=noninteractive "${sudo[@]}" apt-get install -y -qq "${missing[@]}" >/dev/null
  fi
  if ! command -v swift >/dev/null 2>&1; then
    for d in /opt/swift/usr/bin /usr/share/swift/usr/bin; do
      [[ -x $d/swift ]] && export PATH="$d:$PATH" && break
    done
  fi
  command -v swift >/dev/null 2>&1 || { echo "error: the Swift toolchain (swift) is not on PATH" >&2; exit 1; }
}
