#!/bin/sh
# Installs what building and testing warpspeed needs, and only what is
# missing. Idempotent: a second run changes nothing.
#
#   1. the toolchain rust-toolchain.toml pins, with rust-src, rustfmt and
#      clippy (the device crate builds `core` for nvptx64 from rust-src);
#   2. a CUDA driver library the linker can use (`cust` links libcuda):
#      - a CUDA toolkit or a `libcuda.so` on the library path: nothing to do;
#      - a driver without the unversioned `libcuda.so` link: a link to it in
#        xtask/cuda-root/lib64 (git-ignored), which the build already searches;
#      - no driver at all (CI, a laptop): Debian's `libcuda1` from non-free,
#        enough to link; the GPU tests then report themselves as ignored.
set -eu
root=$(cd "$(dirname "$0")/.." && pwd)
say() { echo "setup: $*"; }

# 1. Toolchain.
toolchain=$(sed -n 's/^channel *= *"\(.*\)"/\1/p' "$root/rust-toolchain.toml")
if ! command -v rustup >/dev/null 2>&1; then
  echo "setup: rustup is required (https://rustup.rs), then run this again" >&2
  exit 1
fi
if ! rustup toolchain list | grep -q "^$toolchain"; then
  say "installing Rust $toolchain"
  rustup toolchain install "$toolchain" --profile minimal --component rust-src,rustfmt,clippy
fi
installed=$(rustup component list --toolchain "$toolchain" --installed)
for component in rust-src rustfmt clippy; do
  if ! echo "$installed" | grep -q "^$component"; then
    say "adding $component to $toolchain"
    rustup component add --toolchain "$toolchain" "$component"
  fi
done

# 2. libcuda for linking.
link_dir="$root/xtask/cuda-root/lib64"
linkable() {
  [ -e "$link_dir/libcuda.so" ] && return 0
  ldconfig -p 2>/dev/null | grep -q 'libcuda\.so \|libcuda\.so$' && return 0
  for dir in ${CUDA_LIBRARY_PATH:-} /usr/local/cuda /opt/cuda; do
    [ -e "$dir/lib64/libcuda.so" ] || [ -e "$dir/lib64/stubs/libcuda.so" ] && return 0
  done
  return 1
}
if linkable; then
  :
elif driver=$(ldconfig -p 2>/dev/null | sed -n 's/.*libcuda\.so\.1 .*=> \(.*\)$/\1/p' | head -1) && [ -n "$driver" ]; then
  say "linking against the installed driver $driver"
  ln -sf "$driver" "$link_dir/libcuda.so"
elif command -v apt-get >/dev/null 2>&1 && [ "$(id -u)" = 0 ]; then
  . /etc/os-release
  codename=${VERSION_CODENAME:-bookworm}
  sources=/etc/apt/sources.list.d/warpspeed-nonfree.sources
  if ! grep -rqs "non-free" /etc/apt/sources.list /etc/apt/sources.list.d/; then
    mirror=$(sed -n 's/^URIs: *\(http[^ ]*debian\/*\)$/\1/p' /etc/apt/sources.list.d/debian.sources 2>/dev/null | head -1)
    say "enabling Debian's non-free component for libcuda1"
    cat >"$sources" <<SOURCES
Types: deb
URIs: ${mirror:-http://deb.debian.org/debian}
Suites: $codename $codename-updates
Components: non-free contrib
Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg
SOURCES
  fi
  say "installing Debian's libcuda1 (no CUDA driver found)"
  apt-get update -qq
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends libcuda1 >/dev/null
else
  echo "setup: no CUDA driver library found; install the NVIDIA driver (or, on Debian, the libcuda1 package)" >&2
  exit 1
fi
say "ready ($toolchain)"
