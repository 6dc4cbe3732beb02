#!/usr/bin/env python3
"""Generate the patched view of k8s.io/kubernetes that the oracle builds against.

Nothing of upstream is committed: this script reads the module from the Go module cache,
applies a few anchored text edits (each anchor must match exactly once, or the build
stops) and writes OUT_DIR, a tree that mirrors the module with symbolic links into the
module cache, except the edited files and one added hook file per edited package
(hooks/*.go.txt). build.sh points a `replace k8s.io/kubernetes => OUT_DIR` at it. (go build
-overlay would be simpler, but the go command refuses overlays of files in GOMODCACHE.)

Usage: make_overlay.py RELEASE KUBERNETES_MODULE_DIR OUT_DIR
The hooks (all off by default, so an unset hook behaves as upstream):
  scheduler.OracleLowestName          selectHost: score ties go to the smallest node name
  defaultpreemption.OracleLowestName  potential nodes examined from offset 0
  preemption.OracleLowestName         potential nodes in name order; last tie -> smallest name
  preemption.OracleAsync/OracleSettle the async preemption goroutine is started through a hook
                                      (serial mode runs it itself) with settle points after the
                                      clearing of lower-priority nominations and each victim
  volumebinding.OraclePollInterval    BindPodVolumes' poll interval (upstream 1 s)
  volumebinding.OracleSortPVs         ListPVs returns a class's PVs in name order
"""
import os
import shutil
import sys

HERE = os.path.dirname(os.path.abspath(__file__))

# (file, [(anchor, replacement)], hook file). Anchors are exact text; each must occur once.
EDITS = {
    "pkg/scheduler/schedule_one.go": [
        ("if rand.Intn(cntOfMaxScore) == 0 {",
         "if oracleTakeTie(cntOfMaxScore, ns.Name, sortedNodeScoreList[selectedIndex].Name) {"),
    ],
    "pkg/scheduler/framework/plugins/defaultpreemption/default_preemption.go": [
        ("return getOffsetRand(numNodes), pl.calculateNumCandidates(numNodes)",
         "return oracleOffset(numNodes), pl.calculateNumCandidates(numNodes)"),
    ],
    "pkg/scheduler/framework/preemption/preemption.go": [
        ("potentialNodes, err := m.NodesForStatusCode(ev.Handler.SnapshotSharedLister().NodeInfos(), fwk.Unschedulable)\n",
         "potentialNodes, err := m.NodesForStatusCode(ev.Handler.SnapshotSharedLister().NodeInfos(), fwk.Unschedulable)\n"
         "\toracleSortNodeInfos(potentialNodes)\n"),
        ("\t\tallCandidates = append(allCandidates, node)\n\t}\n",
         "\t\tallCandidates = append(allCandidates, node)\n\t}\n\toracleSortNames(allCandidates)\n"),
        # prepareCandidateAsync's goroutine (the file's only `go func`)
        ("\tgo func() {\n", "\tOracleAsync(func() {\n"),
        ("\n\t}()\n}\n", "\n\t})\n}\n"),
        # a settle once lower-priority nominations are cleared, and after each victim
        ("// We do not return as this error is not critical.\n\t\t}\n",
         "// We do not return as this error is not critical.\n\t\t}\n\t\tOracleSettle()\n"),
        ("\treturn ev\n}\n", "\tev.PreemptPod = oracleWrapPreemptPod(ev.PreemptPod)\n\treturn ev\n}\n"),
    ],
    "pkg/scheduler/framework/plugins/volumebinding/binder.go": [
        ("wait.PollUntilContextTimeout(ctx, time.Second, b.bindTimeout,",
         "wait.PollUntilContextTimeout(ctx, OraclePollInterval, b.bindTimeout,"),
    ],
    "pkg/scheduler/framework/plugins/volumebinding/assume_cache.go": [
        ("\t\tpvs = append(pvs, pv)\n\t}\n\treturn pvs\n",
         "\t\tpvs = append(pvs, pv)\n\t}\n\toracleSortPVs(pvs)\n\treturn pvs\n"),
    ],
}

HOOKS = {
    "pkg/scheduler": "scheduler.go.txt",
    "pkg/scheduler/framework/plugins/defaultpreemption": "defaultpreemption.go.txt",
    "pkg/scheduler/framework/preemption": "preemption.go.txt",
    "pkg/scheduler/framework/plugins/volumebinding": "volumebinding.go.txt",
}

# Per-release replacements of EDITS entries (same keys), when an anchor moved upstream.
RELEASE_EDITS = {
    # 1.35: selectHost is gone; score ties are broken by a random Randomizer in the heap order,
    # and ListPVs reads an index of the assume cache.
    "1.35": {
        "pkg/scheduler/schedule_one.go": [
            ("(h[i].TotalScore == h[j].TotalScore && h[i].Randomizer > h[j].Randomizer))",
             "(h[i].TotalScore == h[j].TotalScore && oracleTieLess(h[i], h[j])))"),
        ],
        "pkg/scheduler/framework/plugins/volumebinding/assume_cache.go": [
            ("\treturn c.ByIndex(storageClassIndex, storageClassName)\n",
             "\tpvs, err := c.ByIndex(storageClassIndex, storageClassName)\n\toracleSortPVs(pvs)\n\treturn pvs, err\n"),
        ],
    },
}
RELEASE_HOOKS = {
    "1.35": {"pkg/scheduler": "scheduler-1.35.go.txt"},
}


def mirror(moddir, out, rel_dirs):
    """Real directories along every path in rel_dirs, symlinks for everything else."""
    real = {""}
    for d in rel_dirs:
        parts = d.split("/")
        for i in range(1, len(parts) + 1):
            real.add("/".join(parts[:i]))
    for d in sorted(real):
        src = os.path.join(moddir, d)
        dst = os.path.join(out, d)
        os.makedirs(dst, exist_ok=True)
        for entry in os.listdir(src):
            rel = f"{d}/{entry}" if d else entry
            if rel in real:
                continue
            link = os.path.join(dst, entry)
            if os.path.lexists(link):
                os.remove(link)
            os.symlink(os.path.join(src, entry), link)


def main():
    release, moddir, out = sys.argv[1], sys.argv[2], sys.argv[3]
    minor = ".".join(release.split(".")[:2])
    edits = dict(EDITS)
    edits.update(RELEASE_EDITS.get(minor, {}))
    hooks = dict(HOOKS)
    hooks.update(RELEASE_HOOKS.get(minor, {}))
    if os.path.isdir(out):
        shutil.rmtree(out)
    dirs = {os.path.dirname(r) for r in edits} | set(hooks)
    mirror(moddir, out, sorted(dirs))
    for rel, pairs in sorted(edits.items()):
        with open(os.path.join(moddir, rel), encoding="utf-8") as f:
            text = f.read()
        for anchor, new in pairs:
            n = text.count(anchor)
            if n != 1:
                sys.exit(f"make_overlay: {release}: anchor found {n} times in {rel}: {anchor.strip()[:80]!r}")
            text = text.replace(anchor, new)
        dst = os.path.join(out, rel)
        os.remove(dst)
        with open(dst, "w", encoding="utf-8") as f:
            f.write(text)
    for pkg, hook in sorted(hooks.items()):
        with open(os.path.join(HERE, "hooks", hook), encoding="utf-8") as f:
            text = f.read()
        with open(os.path.join(out, pkg, "zz_oracle_hooks.go"), "w", encoding="utf-8") as f:
            f.write(text)


if __name__ == "__main__":
    main()
