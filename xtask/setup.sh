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
#        enough to link; the GPU tests then report themselves as ignored;
#   3. ptxas, which `cargo xtask build-ptx` turns the PTX into cubins with:
#      CUDA 12.9's, from NVIDIA's PyPI wheel `nvidia-cuda-nvcc-cu12` (checked
#      against a pinned sha256), into xtask/tools/ptxas (git-ignored; ptxas
#      is for building only and is never committed). `WARPSPEED_PTXAS=<path>`
#      names one you already have instead, and nothing is downloaded.
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
    # The machine's own Debian mirror: from its deb822 sources, else from a
    # one-line sources.list entry.
    mirror=$(sed -n 's/^URIs: *\(http[^ ]*debian\/*\)$/\1/p' /etc/apt/sources.list.d/*.sources 2>/dev/null | head -1)
    [ -n "$mirror" ] || mirror=$(sed -n 's/^deb  *\(http[^ ]*debian\/*\) .*/\1/p' /etc/apt/sources.list 2>/dev/null | head -1)
    if [ -z "$mirror" ]; then
      echo "setup: no CUDA driver library found, and no Debian mirror in this machine's apt sources" >&2
      echo "setup: to link, either install the NVIDIA driver (or a CUDA toolkit), or add the" >&2
      echo "setup: 'non-free contrib' components of your Debian mirror to apt's sources and" >&2
      echo "setup: run this again (it then installs Debian's libcuda1)" >&2
      exit 1
    fi
    say "enabling Debian's non-free component for libcuda1 (from $mirror)"
    cat >"$sources" <<SOURCES
Types: deb
URIs: $mirror
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

# 3. ptxas for the cubins. The committed cubins are this release's output.
ptxas_version=12.9.86
ptxas_wheel_sha256=5d6a0d32fdc7ea39917c20065614ae93add6f577d840233237ff08e9a38f58f0
ptxas_release="Cuda compilation tools, release ${ptxas_version%.*}, V$ptxas_version"
ptxas="$root/xtask/tools/ptxas"
if [ -n "${WARPSPEED_PTXAS:-}" ]; then
  if [ ! -x "$WARPSPEED_PTXAS" ]; then
    echo "setup: WARPSPEED_PTXAS=$WARPSPEED_PTXAS is not an executable file" >&2
    exit 1
  fi
  if ! "$WARPSPEED_PTXAS" --version | grep -qx "$ptxas_release"; then
    say "warning: $WARPSPEED_PTXAS is not ptxas $ptxas_version; its cubins will differ from the committed ones"
  fi
elif "$ptxas" --version 2>/dev/null | grep -qx "$ptxas_release"; then
  :
elif [ "$(uname -s)-$(uname -m)" != Linux-x86_64 ]; then
  echo "setup: the pinned ptxas wheel is for x86-64 Linux; set WARPSPEED_PTXAS to a ptxas $ptxas_version for this machine" >&2
  exit 1
else
  say "installing ptxas $ptxas_version (from PyPI's nvidia-cuda-nvcc-cu12, for building only)"
  download=$(mktemp -d)
  trap 'rm -rf "$download"' EXIT
  python3 -m pip download --quiet --no-deps --dest "$download" "nvidia-cuda-nvcc-cu12==$ptxas_version"
  set -- "$download"/*.whl
  wheel=$1
  if [ "$(sha256sum "$wheel" | cut -d ' ' -f 1)" != "$ptxas_wheel_sha256" ]; then
    echo "setup: $(basename "$wheel") does not have the pinned sha256; not installing it" >&2
    exit 1
  fi
  mkdir -p "$(dirname "$ptxas")"
  python3 -c 'import sys, zipfile; sys.stdout.buffer.write(zipfile.ZipFile(sys.argv[1]).read("nvidia/cuda_nvcc/bin/ptxas"))' "$wheel" >"$ptxas.partial"
  chmod +x "$ptxas.partial"
  mv "$ptxas.partial" "$ptxas"
  if ! "$ptxas" --version | grep -qx "$ptxas_release"; then
    echo "setup: $ptxas does not report \"$ptxas_release\"" >&2
    exit 1
  fi
fi
say "ready ($toolchain)"
