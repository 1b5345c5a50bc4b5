#!/bin/bash
# Builds ngx_http_replica_mirror_module.so against the nginx that Debian's nginx-dev describes
# (its headers, configure and flags: the .so must match the installed nginx's ABI), into $1
# (default: this directory's build/). Needs nginx-dev, gcc and make.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
out="${1:-$here/build}"
src=/usr/share/nginx/src
[ -f "$src/conf_flags" ] || { echo "build.sh: $src missing: apt-get install nginx-dev" >&2; exit 1; }
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
cp -r "$src/." "$work/"
# shellcheck disable=SC1091
. "$src/conf_flags"
cd "$work"
./configure "${NGX_CONF_FLAGS[@]}" --add-dynamic-module="$here" >configure.log 2>&1 \
  || { tail -30 configure.log >&2; exit 1; }
make -f objs/Makefile modules >make.log 2>&1 || { grep -E "error|warning" make.log >&2; exit 1; }
grep -E "warning" make.log >&2 || true
mkdir -p "$out"
# A rename, never a write over the file: a running nginx has it mapped, and crashes on new bytes.
cp objs/ngx_http_replica_mirror_module.so "$out/.ngx_http_replica_mirror_module.so.new"
mv -f "$out/.ngx_http_replica_mirror_module.so.new" "$out/ngx_http_replica_mirror_module.so"
echo "$out/ngx_http_replica_mirror_module.so"
