#!/usr/bin/env bash
# CI: build the desktop bundle and run its smoke test on a real X server (Xvfb, xcb platform).
#   bash .ci/bundle.sh [REPORT_DIR]     (default build/smoke; smoke.json and the exports go there)
# Installs the system packages the build and Qt's xcb platform plugin need (apt-get, as root or
# through sudo), builds with packaging/build.sh, checks that the bundled xcb plugin finds every
# library it links, checks the newest glibc a bundled file needs (packaging/glibc_check.py),
# then runs `dist/sectorviz/sectorviz --smoke-test REPORT_DIR` under
# xvfb-run. Fails unless the app exits 0 and REPORT_DIR/smoke.json says "ok": true, and unless
# the bundle's own NVRTC compiles a CUDA example, then every NVRTC-able example and the header
# probe (packaging/nvrtc_headers.py: the compiles that measured the bundle's header keep-list).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
report=${1:-build/smoke}

# Qt's xcb platform plugin (libqxcb.so, libQt6XcbQpa) links the XCB utility libraries,
# xkbcommon-x11, EGL/GLX, fontconfig, freetype, glib and D-Bus (found with ldd on the plugin
# and QT_DEBUG_PLUGINS=1); binutils gives the build `strip`, python3-venv its environment.
packages=(
    python3 python3-venv binutils xvfb xauth fonts-dejavu-core
    libxcb1 libx11-6 libx11-xcb1 libxcb-cursor0 libxcb-glx0 libxcb-icccm4 libxcb-image0
    libxcb-keysyms1 libxcb-randr0 libxcb-render0 libxcb-render-util0 libxcb-shape0 libxcb-shm0
    libxcb-sync1 libxcb-util1 libxcb-xfixes0 libxcb-xinerama0 libxcb-xkb1 libxkbcommon0
    libxkbcommon-x11-0 libegl1 libgl1 libglx0 libfontconfig1 libfreetype6 libglib2.0-0
    libdbus-1-3 libpng16-16
)
sudo=""
[ "$(id -u)" -eq 0 ] || sudo=sudo
$sudo apt-get update -q
DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -q --no-install-recommends "${packages[@]}"

bash packaging/build.sh

# The newest glibc a bundled file needs (objdump -T over every ELF file), against what the
# build meets: GLIBC_TARGET. Issue 34 asks 2.28 (PySide6's wheels); a bundle built on Debian 12
# meets 2.35, set by the interpreter it packs (libpython3.11 and its lib-dynload modules, libssl
# and libcrypto, liblzma: built against glibc 2.36); packaging/glibc_check.py prints per file.
glibc_target=${GLIBC_TARGET:-2.35}
python3 packaging/glibc_check.py dist/sectorviz --target "$glibc_target"

plugin=dist/sectorviz/_internal/PySide6/Qt/plugins/platforms/libqxcb.so
missing=$(ldd "$plugin" | grep 'not found' || true)
if [ -n "$missing" ]; then
    echo "the bundled xcb platform plugin lacks system libraries:" >&2
    echo "$missing" >&2
    exit 1
fi

rm -rf "$report"
mkdir -p "$report"
status=0
timeout 180 xvfb-run -a -s '-screen 0 1920x1080x24' \
    env QT_QPA_PLATFORM=xcb dist/sectorviz/sectorviz --smoke-test "$report" || status=$?
if [ ! -f "$report/smoke.json" ]; then
    echo "smoke test wrote no $report/smoke.json (exit status $status)" >&2
    exit 1
fi
cat "$report/smoke.json"
python3 - "$report/smoke.json" "$status" <<'PY'
import json
import sys

doc = json.load(open(sys.argv[1], encoding="utf-8"))
status = int(sys.argv[2])
for check in doc["checks"]:
    print(f"{'ok  ' if check['ok'] else 'FAIL'} {check['name']}: {check['detail']}")
if doc["ok"] is not True or status != 0:
    sys.exit(f"bundle smoke test failed (exit status {status}, ok={doc['ok']})")
print(f"bundle smoke test ok in {doc['timings']['total_s']} s, first paint "
      f"{doc['timings']['first_paint_s']} s after launch")
PY

# The NVRTC the bundle ships compiles a CUDA example by itself (SECTORVIZ_COMPILER=nvrtc: nvcc
# is not looked for), its child compile run by the bundle's own executable.
SECTORVIZ_COMPILER=nvrtc SECTORVIZ_CACHE_DIR="$report/ptx-cache" dist/sectorviz/sectorviz \
    report --engine compiled resources/examples/vector-add-cuda.sectorviz.json --json \
    > "$report/nvrtc-report.json"
python3 - "$report/nvrtc-report.json" <<'PY'
import json
import sys

doc = json.load(open(sys.argv[1], encoding="utf-8"))
if doc["engine"] != "compiled" or not doc["compiler"].startswith("NVRTC"):
    sys.exit(f"the bundle's NVRTC did not compile the example: {doc['engine']}, "
             f"{doc['compiler']}")
print(f"bundled NVRTC: vector-add-cuda compiled by {doc['compiler']}, "
      f"{doc['totals']['sectors']:,} sectors")
PY

# The headers the bundle keeps (trim.py's keep-list) suffice for the compiles they were
# measured on; this fails when newer wheels need headers the list lacks.
python3 packaging/nvrtc_headers.py run "$report/nvrtc-headers" --app dist/sectorviz/sectorviz
