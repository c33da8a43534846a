#!/usr/bin/env bash
# Installs lipgnn's build and test dependencies from Debian's packages (Debian 12).
# Runs apt-get only when something is missing; uses sudo when not root.
set -euo pipefail
# clang and libclang-rt-14-dev (libFuzzer and clang's sanitizers; the runtime is
# only a recommended package of clang, so it is named here) and libomp-dev
# (OpenMP for clang) build the fuzz harnesses (tools/fuzz.sh); valgrind runs
# tests/valgrind.sh; python3-torch runs the benchmark peer and tests/test_peer.sh;
# locales holds the locale sources from which test_dataset compiles one with a
# decimal comma (localedef).
pkgs=(build-essential cmake pkg-config
      libsuitesparse-dev libopenblas-dev libigraph-dev libcmocka-dev
      python3 python3-numpy python3-scipy python3-torch
      clang libclang-rt-14-dev libomp-dev valgrind locales)
missing=()
for p in "${pkgs[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -eq 0 ]; then
  echo "install-deps: all dependencies present"
  exit 0
fi
SUDO=""
[ "$(id -u)" -eq 0 ] || SUDO="sudo"
echo "install-deps: installing ${missing[*]}"
$SUDO apt-get update -qq
DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}"
