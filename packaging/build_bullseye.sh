#!/usr/bin/env bash
# Build the desktop bundle in a Debian 11 (bullseye, glibc 2.31) chroot, so that it needs no
# newer glibc than that (the bundle packaging/build.sh makes on Debian 12 needs 2.35: its
# interpreter was built against glibc 2.36):
#   sudo bash packaging/build_bullseye.sh        (root: debootstrap and chroot)
# -> what packaging/build.sh makes, under dist/ (the chroot's dist/ copied out).
# Debian 11 ships Python 3.9 and the build needs 3.11, so the chroot builds CPython 3.11 from
# Debian 12's source package (its upstream tarball, with a shared libpython, under
# /opt/python3.11). The chroot (build/bullseye, or $SECTORVIZ_CHROOT) and its Python are kept
# for the next build. Needs debootstrap, and deb.debian.org and PyPI reachable.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
chroot_dir=${SECTORVIZ_CHROOT:-$root/build/bullseye}
mirror=http://deb.debian.org/debian
python=/opt/python3.11/bin/python3.11

if [ ! -x "$chroot_dir/usr/bin/apt-get" ]; then
    debootstrap --variant=minbase bullseye "$chroot_dir" "$mirror"
fi
mountpoint -q "$chroot_dir/proc" || mount --bind /proc "$chroot_dir/proc"
trap 'umount "$chroot_dir/proc"' EXIT
cp /etc/resolv.conf "$chroot_dir/etc/resolv.conf"

if [ ! -x "$chroot_dir$python" ]; then
    echo "deb-src $mirror bookworm main" > "$chroot_dir/etc/apt/sources.list.d/bookworm-src.list"
    chroot "$chroot_dir" bash -euo pipefail -c '
        apt-get update -q
        DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends \
            build-essential dpkg-dev binutils ca-certificates xz-utils libssl-dev libffi-dev \
            zlib1g-dev libbz2-dev liblzma-dev uuid-dev libsqlite3-dev
        mkdir -p /src && cd /src && apt-get source --download-only python3.11
        rm -rf python && mkdir python && tar -xzf python3.11_*.orig.tar.gz -C python \
            --strip-components 1
        cd python
        ./configure -q --enable-shared --prefix=/opt/python3.11 \
            LDFLAGS="-Wl,-rpath,/opt/python3.11/lib"
        make -s -j"$(nproc)"
        make -s install
        /opt/python3.11/bin/python3.11 -c "import ssl, lzma, bz2, ctypes, zlib, uuid"'
fi

# the checkout's committed files, built where the chroot's build.sh makes its own venv
rm -rf "$chroot_dir/src/sectorviz"
mkdir -p "$chroot_dir/src/sectorviz"
git archive HEAD | tar -x -C "$chroot_dir/src/sectorviz"
chroot "$chroot_dir" env PYTHON="$python" bash /src/sectorviz/packaging/build.sh
rm -rf dist/sectorviz
mkdir -p dist
cp -a "$chroot_dir/src/sectorviz/dist/." dist/
