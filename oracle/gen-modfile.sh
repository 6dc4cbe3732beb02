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
mods=$(curl -fsS "${GOPROXY_URL:-https://proxy.golang.org}/k8s.io/kubernetes/@v/$kver.mod" |
  sed -n '/^replace (/,/^)/p' | awk '/=>/ {print $1}')
{
  echo "module kube-oracle"
  echo
  echo "go 1.26"
  echo
  echo "require k8s.io/kubernetes $kver"
  echo
  echo "replace ("
  for m in $mods; do printf '\t%s => %s %s\n' "$m" "$m" "$stage"; done
  echo ")"
} > "$out"
echo "wrote $out (k8s.io/kubernetes $kver, staging $stage)"
