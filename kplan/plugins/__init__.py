"""The in-tree plugin registry (pkg/scheduler/framework/plugins/registry.go), written out by hand.

Each entry names the extension points the plugin implements, exactly as the v1.34 default
MultiPoint set exposes them (reference 1.2), and its args kind when it has one.
"""

from __future__ import annotations

from kplan.framework.registry import PluginSpec, Registry
from kplan.plugins import (
    defaultbinder,
    defaultpreemption,
    dynamicresources,
    imagelocality,
    interpodaffinity,
    nodeaffinity,
    nodename,
    nodeports,
    nodeunschedulable,
    nodevolumelimits,
    podtopologyspread,
    queuesort,
    schedulinggates,
    tainttoleration,
    volumebinding,
    volumerestrictions,
    volumezone,
)
from kplan.plugins.extra import extra_plugin_specs
from kplan.plugins.noderesources import balanced_allocation, fit


def _points(*names: str) -> frozenset[str]:
    return frozenset(names)


def in_tree_registry() -> Registry:
    return Registry([
        PluginSpec("SchedulingGates", schedulinggates.SchedulingGates, _points("preEnqueue")),
        PluginSpec("PrioritySort", queuesort.PrioritySort, _points("queueSort")),
        PluginSpec("NodeUnschedulable", nodeunschedulable.NodeUnschedulable, _points("filter")),
        PluginSpec("NodeName", nodename.NodeName, _points("filter")),
        PluginSpec("TaintToleration", tainttoleration.TaintToleration, _points("filter", "preScore", "score")),
        PluginSpec("NodeAffinity", nodeaffinity.NodeAffinity, _points("preFilter", "filter", "preScore", "score"),
                   "NodeAffinityArgs", nodeaffinity.decode_args, nodeaffinity.validate_args),
        PluginSpec("NodePorts", nodeports.NodePorts, _points("preFilter", "filter")),
        PluginSpec("NodeResourcesFit", fit.NodeResourcesFit, _points("preFilter", "filter", "preScore", "score"),
                   "NodeResourcesFitArgs", fit.decode_args, fit.validate_args, validate_on_build=True),
        PluginSpec("VolumeRestrictions", volumerestrictions.VolumeRestrictions, _points("preFilter", "filter")),
        PluginSpec("NodeVolumeLimits", nodevolumelimits.NodeVolumeLimits, _points("preFilter", "filter")),
        PluginSpec("VolumeBinding", volumebinding.VolumeBinding,
                   _points("preFilter", "filter", "reserve", "preBind", "preScore", "score"),
                   "VolumeBindingArgs", volumebinding.decode_args, volumebinding.validate_args),
        PluginSpec("VolumeZone", volumezone.VolumeZone, _points("preFilter", "filter")),
        PluginSpec("PodTopologySpread", podtopologyspread.PodTopologySpread,
                   _points("preFilter", "filter", "preScore", "score"),
                   "PodTopologySpreadArgs", podtopologyspread.decode_args, podtopologyspread.validate_args),
        PluginSpec("InterPodAffinity", interpodaffinity.InterPodAffinity,
                   _points("preFilter", "filter", "preScore", "score"),
                   "InterPodAffinityArgs", interpodaffinity.decode_args, interpodaffinity.validate_args),
        PluginSpec("DynamicResources", dynamicresources.DynamicResources,
                   _points("preEnqueue", "preFilter", "filter", "postFilter", "reserve", "preBind"),
                   "DynamicResourcesArgs", _dra_args, _dra_validate),
        PluginSpec("DefaultPreemption", defaultpreemption.DefaultPreemption, _points("preEnqueue", "postFilter"),
                   "DefaultPreemptionArgs", defaultpreemption.decode_args, defaultpreemption.validate_args),
        PluginSpec("NodeResourcesBalancedAllocation", balanced_allocation.NodeResourcesBalancedAllocation,
                   _points("preScore", "score"), "NodeResourcesBalancedAllocationArgs",
                   balanced_allocation.decode_args, balanced_allocation.validate_args),
        PluginSpec("ImageLocality", imagelocality.ImageLocality, _points("score")),
        PluginSpec("DefaultBinder", defaultbinder.DefaultBinder, _points("bind")),
        # kplan's own opt-in plugins: registered, but not in the default MultiPoint set
        *extra_plugin_specs(),
    ])


def _dra_args(raw: object) -> dict[str, object]:
    from kplan.framework.registry import ArgsError
    raw = raw or {}
    assert isinstance(raw, dict)
    for k in raw:
        if k != "filterTimeout":
            raise ArgsError(f'unknown field "{k}"')
    return {"filterTimeout": raw.get("filterTimeout", "10s")}


def _dra_validate(args: dict[str, object]) -> list[str]:
    t = str(args.get("filterTimeout") or "")
    if t.startswith("-"):
        return [f"filterTimeout: Invalid value: \"{t}\": must be zero or positive"]
    return []
