#!/bin/sh
# Writes releases/<release>.mod: the oracle module at one kube-scheduler release.
# k8s.io/kubernetes requires its staging modules at v0.0.0 and replaces them with
# ./staging paths, which do not exist in the module cache; so every k8s.io/* staging
# module is pinned here to the matching v0.<minor>.<patch> release.
# Usage: ./gen-modfile.sh 1.34 v1.34.2   (then ./build.sh 1.34 --tidy)
set -eu
rel=$1; kver=$2
here=$(cd "$(dirname "$0")" && pwd)
stage=v0.${kver#v1.}
out=$here/releases/$rel.mod
upstream=$(curl -fsS "${GOPROXY_URL:-https://proxy.golang.org}/k8s.io/kubernetes/@v/$kver.mod")
mods=$(printf '%s\n' "$upstream" | sed -n '/^replace (/,/^)/p' | awk '/=>/ {print $1}')
# the oracle needs at least the Go release k8s.io/kubernetes declares (1.26 up to 1.37, 1.27 from 1.38)
gover=$(printf '%s\n' "$upstream" | sed -n 's/^go //p')
{
  echo "module kube-oracle"
  echo
  echo "go ${gover:-1.26}"
  echo
  echo "require k8s.io/kubernetes $kver"
  echo
  echo "replace ("
  for m in $mods; do printf '\t%s => %s %s\n' "$m" "$m" "$stage"; done
  echo ")"
} > "$out"
echo "wrote $out (k8s.io/kubernetes $kver, staging $stage)"
