#!/bin/sh
# Builds the Karpenter oracle:  oracle/karpenter/build.sh [--tidy]  -> oracle/bin/karpenter-oracle
# go.mod requires sigs.k8s.io/karpenter (from the Go module proxy into the module cache); the
# build uses a patched view of it, generated from the module cache by overlay/make_overlay.py
# into build/karpenter-<version> (symbolic links but for the edited files), through a generated
# module file with `replace sigs.k8s.io/karpenter => build/karpenter-<version>`. Nothing of
# upstream is committed; build/ and ../bin/ are ignored by git. Karpenter v1.15.0 declares
# go 1.26.9, so the build runs with GOTOOLCHAIN=go1.27.3 unless GOTOOLCHAIN is set.
set -eu
here=$(cd "$(dirname "$0")" && pwd)
cd "$here"
export GOTOOLCHAIN="${GOTOOLCHAIN:-go1.27.3}"
if [ "${1:-}" = "--tidy" ]; then
  go mod tidy
fi
go mod download sigs.k8s.io/karpenter
version=$(go list -m -f '{{.Version}}' sigs.k8s.io/karpenter)
moddir=$(go list -m -f '{{.Dir}}' sigs.k8s.io/karpenter)
tree=$here/build/karpenter-$version
mkdir -p "$here/build"
python3 "$here/overlay/make_overlay.py" "$moddir" "$tree"
gen=$here/build/oracle.mod
{ cat go.mod; echo; echo "replace sigs.k8s.io/karpenter => $tree"; } > "$gen"
cp go.sum "$here/build/oracle.sum"
mkdir -p "$here/../bin"
go build -modfile="$gen" -trimpath -o "$here/../bin/karpenter-oracle" ./cmd/karpenter-oracle
echo "built $(cd "$here/../bin" && pwd)/karpenter-oracle"
