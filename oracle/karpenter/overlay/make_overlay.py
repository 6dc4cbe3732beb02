#!/usr/bin/env python3
"""Writes a patched view of sigs.k8s.io/karpenter for the oracle build.

    make_overlay.py MODULE_DIR OUT_DIR

OUT_DIR mirrors MODULE_DIR (the module cache's copy) with symbolic links for Go files and copies
of the others (go:embed refuses links), except the files edited below, which are copied and edited, and one added file (hooks/*.go.txt, our code).
Each edit is an exact anchor that must occur the stated number of times, or the build stops.
The edits only replace choices upstream leaves to Go's random map order by a fixed rule:

  topologygroup.go  nextDomainTopologySpread: among valid domains of equal count, the smallest
                    name (upstream: the first met in map order);
                    nextDomainAffinity: the bootstrap domain of a self-selecting pod is the
                    smallest eligible name (upstream: the first met in map order);
  topology.go       getMatchingTopologies: the pod's own topologies, then the inverse ones, each
                    in a fixed order (type, key, selector, maxSkew, namespaces) — decides which
                    failing topology names the error (upstream: map order);
  scheduler.go      buildDaemonOverheadGroups: groups in the order of their DaemonSet-pod key
                    (upstream: map order), which orders the instance types of new NodeClaims.
"""
import os
import shutil
import sys

PKG = "pkg/controllers/provisioning/scheduling"

EDITS = {
    f"{PKG}/topologygroup.go": [
        ("if count < minCount {",
         "if count < minCount || (count == minCount && domain < minDomain) {", 2),
        ("\t\tfor domain := range t.domains {\n\t\t\tif intersected.Has(domain) {",
         "\t\tfor _, domain := range oracleSortedDomains(t.domains) {\n\t\t\tif intersected.Has(domain) {", 1),
        ("\t\tfor domain := range t.domains {\n\t\t\tif podDomains.Has(domain) {\n\t\t\t\toptions.Insert(domain)\n\t\t\t\tbreak",
         "\t\tfor _, domain := range oracleSortedDomains(t.domains) {\n\t\t\tif podDomains.Has(domain) {\n\t\t\t\toptions.Insert(domain)\n\t\t\t\tbreak", 1),
    ],
    f"{PKG}/topology.go": [
        ("\t\tif tg.IsOwnedBy(p.UID) {\n\t\t\tmatchingTopologies = append(matchingTopologies, tg)\n\t\t}\n\t}\n",
         "\t\tif tg.IsOwnedBy(p.UID) {\n\t\t\tmatchingTopologies = append(matchingTopologies, tg)\n\t\t}\n\t}\n\towned := len(matchingTopologies)\n", 1),
        ("\treturn matchingTopologies\n}",
         "\treturn oracleSortTopologies(matchingTopologies, owned)\n}", 1),
    ],
    f"{PKG}/scheduler.go": [
        ("result := lo.Map(lo.Values(groups), func(g *DaemonOverheadGroup, _ int) DaemonOverheadGroup { return *g })",
         "result := lo.Map(oracleSortedGroups(groups), func(g *DaemonOverheadGroup, _ int) DaemonOverheadGroup { return *g })", 1),
    ],
}

HOOKS = {f"{PKG}/zz_oracle_hooks.go": "scheduling_hooks.go.txt"}


def main() -> None:
    if len(sys.argv) != 3:
        sys.exit("usage: make_overlay.py MODULE_DIR OUT_DIR")
    src, out = sys.argv[1], sys.argv[2]
    here = os.path.dirname(os.path.abspath(__file__))
    if os.path.exists(out):
        shutil.rmtree(out)
    for root, dirs, files in os.walk(src):
        rel = os.path.relpath(root, src)
        os.makedirs(os.path.join(out, rel), exist_ok=True)
        for f in files:
            relf = os.path.normpath(os.path.join(rel, f))
            if relf in EDITS:
                continue
            if f.endswith(".go"):
                os.symlink(os.path.join(root, f), os.path.join(out, relf))
            else:  # go:embed refuses symbolic links (the CRDs, the KWOK instance types)
                shutil.copyfile(os.path.join(root, f), os.path.join(out, relf))
    for relf, edits in EDITS.items():
        with open(os.path.join(src, relf)) as fh:
            text = fh.read()
        for old, new, count in edits:
            found = text.count(old)
            if found != count:
                sys.exit(f"make_overlay.py: {relf}: anchor found {found} times, expected {count}:\n{old}")
            text = text.replace(old, new)
        with open(os.path.join(out, relf), "w") as fh:
            fh.write(text)
    for relf, hook in HOOKS.items():
        shutil.copy(os.path.join(here, "hooks", hook), os.path.join(out, relf))


if __name__ == "__main__":
    main()
