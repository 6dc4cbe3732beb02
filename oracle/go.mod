// The module root only: builds use -modfile=releases/<release>.mod (see build.sh),
// which pins k8s.io/kubernetes and its staging modules at one release.
module kube-oracle

go 1.26
