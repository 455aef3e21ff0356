#!/usr/bin/env bash
# Installs what smtlab needs to build and test: Debian packages (only those missing) and a Python virtual environment
# in .venv with requirements.txt (reinstalled only when that file changes). Idempotent and quick when all is present;
# `make test` and `make demo` run it first.
# Environment: VENV (default .venv); SMTLAB_BASE_PYTHON (interpreter to create the venv with, default: first >= 3.11).
set -euo pipefail

cd "$(dirname "${BASH_SOURCE[0]}")/.."
VENV=${VENV:-.venv}
REQUIREMENTS=requirements.txt

step() { echo "bootstrap: $*"; }
fail() { echo "bootstrap: ERROR: $*" >&2; exit 1; }

# --- Debian packages ------------------------------------------------------------------------------------------------
# Not libboost-dev / libboost-all-dev: their 1.74 headers conflict with the 1.81 ones (shared/build-notes.md).
# python3-venv and python3-dev make Debian's own python3 usable for the venv and for building extensions.
PACKAGES=(cmake ninja-build g++ pkg-config
  libboost1.81-dev libboost-iostreams1.81-dev libboost-program-options1.81-dev libboost-json1.81-dev
  libfmt-dev libgtest-dev libtomlplusplus-dev pybind11-dev libzstd-dev liblzma-dev
  python3 python3-venv python3-dev
  clang libclang-rt-14-dev  # clang and its runtime (libFuzzer, sanitizers) for scripts/fuzz.sh
  gcc qemu-user libcapstone-dev)  # the tracer: QEMU runs programs with our plugin, capstone decodes (docs/tracing.md)
PACKAGES+=(qemu-system-x86 busybox-static cpio)  # system mode: kpath:NAME boots Debian's kernel (scripts/kpath_kernel.sh)

if command -v dpkg-query >/dev/null 2>&1; then
  missing=()
  for pkg in "${PACKAGES[@]}"; do
    status=$(dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null || true)
    [[ "$status" == "install ok installed" ]] || missing+=("$pkg")
  done
  if ((${#missing[@]} == 0)); then
    step "Debian packages: all ${#PACKAGES[@]} present"
  else
    step "Debian packages: installing ${missing[*]}"
    SUDO=()
    if [[ $(id -u) -ne 0 ]]; then
      command -v sudo >/dev/null 2>&1 || fail "not root and no sudo; install as root: apt-get install ${missing[*]}"
      SUDO=(sudo)
    fi
    "${SUDO[@]}" apt-get update -qq || fail "apt-get update failed"
    "${SUDO[@]}" env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${missing[@]}" \
      || fail "apt-get install failed for: ${missing[*]}"
  fi
else
  step "Debian packages: no dpkg-query (not Debian?); skipping, install the equivalents of: ${PACKAGES[*]}"
fi

# --- deb-src entry for QEMU's plugin header ----------------------------------------------------------------------------
# qemu-plugin.h is only in Debian's qemu source package; tools/qemu-tracer fetches it with `apt-get source` at
# configure time, which needs a deb-src entry for this release.
if command -v apt-get >/dev/null 2>&1 && [[ -r /etc/os-release ]]; then
  codename=$(. /etc/os-release && echo "${VERSION_CODENAME:-}")
  srcfile=/etc/apt/sources.list.d/smtlab-deb-src.sources
  if [[ -z "$codename" ]]; then
    step "deb-src: unknown release; the tracer plugin needs SMTLAB_QEMU_PLUGIN_HEADER or a deb-src entry"
  elif grep -rqs '^Types:.*deb-src\|^deb-src ' /etc/apt/sources.list /etc/apt/sources.list.d/; then
    step "deb-src: present"
  else
    step "deb-src: adding $srcfile for $codename (qemu's plugin header)"
    SUDO=()
    if [[ $(id -u) -ne 0 ]]; then
      command -v sudo >/dev/null 2>&1 || fail "not root and no sudo; add a deb-src entry for $codename as root"
      SUDO=(sudo)
    fi
    printf '%s\n' "# Added by smtlab scripts/bootstrap.sh: source packages, for qemu's plugin header (tools/qemu-tracer)." \
      "Types: deb-src" "URIs: http://deb.debian.org/debian" "Suites: $codename $codename-updates" "Components: main" \
      "Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg" | "${SUDO[@]}" tee "$srcfile" >/dev/null \
      || fail "could not write $srcfile"
    "${SUDO[@]}" apt-get update -qq || fail "apt-get update failed after adding $srcfile"
  fi
fi

# --- Python virtual environment ---------------------------------------------------------------------------------------
python_ok() { "$1" -c 'import sys; sys.exit(0 if sys.version_info >= (3, 11) else 1)' >/dev/null 2>&1; }

if [[ -x "$VENV/bin/python" ]] && python_ok "$VENV/bin/python"; then
  step "venv: $VENV present ($("$VENV/bin/python" --version 2>&1))"
else
  # First interpreter >= 3.11: the one asked for, then python3 on PATH (pyenv here), then Debian's own.
  base=""
  for candidate in ${SMTLAB_BASE_PYTHON:-} python3 python3.11 python3.12 python3.13 /usr/bin/python3; do
    if command -v "$candidate" >/dev/null 2>&1 && python_ok "$candidate"; then base=$candidate; break; fi
  done
  [[ -n "$base" ]] || fail "no Python >= 3.11 found (tried \$SMTLAB_BASE_PYTHON, python3, python3.1x, /usr/bin/python3)"
  # A venv whose interpreter vanished (e.g. the machine changed) is rebuilt from scratch.
  rm -rf "$VENV"
  step "venv: creating $VENV with $("$base" -c 'import sys; print(sys.executable, sys.version.split()[0])')"
  "$base" -m venv "$VENV" || fail "could not create $VENV with $base (on Debian: apt-get install python3-venv)"
fi

stamp="$VENV/.requirements.sha256"
want=$(sha256sum "$REQUIREMENTS" | cut -d' ' -f1)
if [[ -f "$stamp" && "$(cat "$stamp")" == "$want" ]]; then
  step "pip: $REQUIREMENTS unchanged since last install"
else
  step "pip: installing $REQUIREMENTS (takes a few minutes the first time)"
  "$VENV/bin/python" -m pip install --disable-pip-version-check -q --upgrade pip \
    || fail "could not upgrade pip in $VENV"
  "$VENV/bin/python" -m pip install --disable-pip-version-check -q -r "$REQUIREMENTS" \
    || fail "pip install -r $REQUIREMENTS failed (see the messages above)"
  echo "$want" > "$stamp"
fi
step "done ($SECONDS s)"
