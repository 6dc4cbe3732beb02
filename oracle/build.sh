#!/bin/sh
# Builds the kube-scheduler oracle against one release:
#   oracle/build.sh 1.34           -> oracle/bin/kube-scheduler-oracle-1.34
#   oracle/build.sh 1.34 --tidy    (after changing imports: refresh releases/1.34.{mod,sum})
# releases/<release>.mod pins k8s.io/kubernetes and every staging module (gen-modfile.sh
# writes it); upstream comes from the Go module proxy into the module cache. The oracle's
# hooks go into a patched view of k8s.io/kubernetes generated at build time from the module
# cache (overlay/make_overlay.py -> build/k8s-<release>, symlinks but for the edited files),
# used through a generated module file with `replace k8s.io/kubernetes => build/k8s-<release>`.
# Nothing of upstream is committed. Go's build cache makes a second build take seconds.
set -eu
here=$(cd "$(dirname "$0")" && pwd)
rel=${1:?usage: build.sh RELEASE [--tidy]}
modfile=$here/releases/$rel.mod
[ -f "$modfile" ] || { echo "build.sh: no $modfile (see gen-modfile.sh)" >&2; exit 2; }
tag=oracle_$(echo "$rel" | tr . _)
# 1.38 (k8s.io/kubernetes v1.38.0-beta.0, `go 1.27.0`) needs Go >= 1.27: the release's module file
# says so, and then the build runs with go1.27.3 (the go command fetches that toolchain as a module
# once) unless GOTOOLCHAIN already names one.
case $(sed -n 's/^go //p' "$modfile") in
  1.27*) case ${GOTOOLCHAIN:-auto} in auto|local) GOTOOLCHAIN=go1.27.3 ;; esac ;;
esac
[ -n "${GOTOOLCHAIN:-}" ] && export GOTOOLCHAIN
cd "$here"
if [ "${2:-}" = "--tidy" ]; then
  go mod tidy -modfile="$modfile"
fi
go mod download -modfile="$modfile" k8s.io/kubernetes
moddir=$(go list -modfile="$modfile" -m -f '{{.Dir}}' k8s.io/kubernetes)
tree=$here/build/k8s-$rel
python3 "$here/overlay/make_overlay.py" "$rel" "$moddir" "$tree"
gen=$here/build/oracle-$rel.mod
{ cat "$modfile"; echo; echo "replace k8s.io/kubernetes => $tree"; } > "$gen"
cp "$here/releases/$rel.sum" "$here/build/oracle-$rel.sum"
mkdir -p "$here/bin"
go build -modfile="$gen" -tags "$tag" -trimpath -o "$here/bin/kube-scheduler-oracle-$rel" ./cmd/kube-oracle
echo "built $here/bin/kube-scheduler-oracle-$rel"
