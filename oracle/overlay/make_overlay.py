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

# The asynchronous preemption goroutine (its file's only `go func`), a settle once
# lower-priority nominations are cleared, and PreemptPod wrapped to settle after each victim.
# Up to 1.35 in preemption.go (Evaluator); from 1.36 in executor.go (Executor).
ASYNC_PREEMPTION = [
    ("\tgo func() {\n", "\tOracleAsync(func() {\n"),
    ("\n\t}()\n}\n", "\n\t})\n}\n"),
    ("// We do not return as this error is not critical.\n\t\t}\n",
     "// We do not return as this error is not critical.\n\t\t}\n\t\tOracleSettle()\n"),
]
SORT_CANDIDATES = (
    "\t\tallCandidates = append(allCandidates, node)\n\t}\n",
    "\t\tallCandidates = append(allCandidates, node)\n\t}\n\toracleSortNames(allCandidates)\n")
# 1.35 and 1.36: selectHost is gone; score ties are broken by a random Randomizer in the heap
# order (schedule_one.go), and ListPVs reads an index of the assume cache.
HEAP_TIE = ("(h[i].TotalScore == h[j].TotalScore && h[i].Randomizer > h[j].Randomizer))",
            "(h[i].TotalScore == h[j].TotalScore && oracleTieLess(h[i], h[j])))")
LIST_PVS_INDEX = ("\treturn c.ByIndex(storageClassIndex, storageClassName)\n",
                  "\tpvs, err := c.ByIndex(storageClassIndex, storageClassName)\n\toracleSortPVs(pvs)\n\treturn pvs, err\n")
POTENTIAL_NODES = "potentialNodes, err := m.NodesForStatusCode(ev.Handler.{}().NodeInfos(), fwk.Unschedulable)\n"

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
        SORT_CANDIDATES,
    ] + ASYNC_PREEMPTION + [
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

# Per-release replacements of EDITS entries (same keys; None drops the entry), when an
# anchor moved upstream.
RELEASE_EDITS = {
    "1.35": {
        "pkg/scheduler/schedule_one.go": [HEAP_TIE],
        "pkg/scheduler/framework/plugins/volumebinding/assume_cache.go": [LIST_PVS_INDEX],
    },
    # 1.36: DefaultPreemption's asynchronous part moved to executor.go (an Executor, which also
    # serves pod-group preemption); the dry run's anchors stay in preemption.go.
    "1.36": {
        "pkg/scheduler/schedule_one.go": [HEAP_TIE],
        "pkg/scheduler/framework/plugins/volumebinding/assume_cache.go": [LIST_PVS_INDEX],
        "pkg/scheduler/framework/preemption/preemption.go": [
            (POTENTIAL_NODES.format("SnapshotSharedLister"),
             POTENTIAL_NODES.format("SnapshotSharedLister") + "\toracleSortNodeInfos(potentialNodes)\n"),
            SORT_CANDIDATES,
        ],
        "pkg/scheduler/framework/preemption/executor.go": ASYNC_PREEMPTION + [
            ("\treturn e\n}\n", "\te.PreemptPod = oracleWrapPreemptPod(e.PreemptPod)\n\treturn e\n}\n"),
        ],
    },
    # 1.37: the score heap moved to framework/sorted_nodes.go (package framework); the dry run
    # lists potential nodes from the MutableSnapshotSharedLister.
    "1.37": {
        "pkg/scheduler/schedule_one.go": None,
        "pkg/scheduler/framework/sorted_nodes.go": [HEAP_TIE],
        "pkg/scheduler/framework/plugins/volumebinding/assume_cache.go": [LIST_PVS_INDEX],
        "pkg/scheduler/framework/preemption/preemption.go": [
            (POTENTIAL_NODES.format("MutableSnapshotSharedLister"),
             POTENTIAL_NODES.format("MutableSnapshotSharedLister") + "\toracleSortNodeInfos(potentialNodes)\n"),
            SORT_CANDIDATES,
        ],
        "pkg/scheduler/framework/preemption/executor.go": ASYNC_PREEMPTION + [
            ("\treturn e\n}\n", "\te.PreemptPod = oracleWrapPreemptPod(e.PreemptPod)\n\treturn e\n}\n"),
        ],
    },
}
# 1.38: the same anchors as 1.37; the hook file changes because the preemption candidate became
# fwk.PreemptionCandidate (k8s.io/kube-scheduler/framework).
RELEASE_EDITS["1.38"] = RELEASE_EDITS["1.37"]
RELEASE_HOOKS = {
    "1.35": {"pkg/scheduler": "scheduler-1.35.go.txt"},
    "1.36": {"pkg/scheduler": "scheduler-1.35.go.txt",
             "pkg/scheduler/framework/preemption": "preemption-1.36.go.txt"},
    "1.37": {"pkg/scheduler": None,
             "pkg/scheduler/framework": "framework-1.37.go.txt",
             "pkg/scheduler/framework/preemption": "preemption-1.37.go.txt"},
    "1.38": {"pkg/scheduler": None,
             "pkg/scheduler/framework": "framework-1.37.go.txt",
             "pkg/scheduler/framework/preemption": "preemption-1.38.go.txt"},
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
    edits = {k: v for k, v in edits.items() if v is not None}
    hooks = dict(HOOKS)
    hooks.update(RELEASE_HOOKS.get(minor, {}))
    hooks = {k: v for k, v in hooks.items() if v is not None}
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
