"""The in-tree plugin registry (pkg/scheduler/framework/plugins/registry.go), written out by hand.

Each entry names the plugin's class and its args kind when it has one; the extension points
it implements are those of its class (``kplan.framework.registry.points_of``).
"""

from __future__ import annotations

from collections.abc import Mapping

from kplan.framework.registry import ArgsKind, PluginSpec, Registry
from kplan.framework.release import KubeVersion, Release, default_release
from kplan.framework.release_tables import V1_34
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

#: NewInTreeRegistry (plugins/registry.go): plugin name → factory, the plugin's class
FACTORIES: dict[str, type] = {
    "SchedulingGates": schedulinggates.SchedulingGates,
    "PrioritySort": queuesort.PrioritySort,
    "NodeUnschedulable": nodeunschedulable.NodeUnschedulable,
    "NodeName": nodename.NodeName,
    "TaintToleration": tainttoleration.TaintToleration,
    "NodeAffinity": nodeaffinity.NodeAffinity,
    "NodePorts": nodeports.NodePorts,
    "NodeResourcesFit": fit.NodeResourcesFit,
    "VolumeRestrictions": volumerestrictions.VolumeRestrictions,
    "NodeVolumeLimits": nodevolumelimits.NodeVolumeLimits,
    "VolumeBinding": volumebinding.VolumeBinding,
    "VolumeZone": volumezone.VolumeZone,
    "PodTopologySpread": podtopologyspread.PodTopologySpread,
    "InterPodAffinity": interpodaffinity.InterPodAffinity,
    "DynamicResources": dynamicresources.DynamicResources,
    "DefaultPreemption": defaultpreemption.DefaultPreemption,
    "NodeResourcesBalancedAllocation": balanced_allocation.NodeResourcesBalancedAllocation,
    "ImageLocality": imagelocality.ImageLocality,
    "DefaultBinder": defaultbinder.DefaultBinder,
}


#: plugins whose formula changed in a release: release → plugin name → the class it runs instead
#: of FACTORIES' one (one row per release kplan models; 1.34 runs FACTORIES as they are)
VARIANTS: Mapping[KubeVersion, Mapping[str, type]] = {
    V1_34: {},
}


def _args_kinds() -> dict[str, ArgsKind]:
    """The args kinds of the in-tree plugins that have one, by plugin name (upstream's
    configuration scheme registers ``<Name>Args`` beside the registry)."""
    return {
        "NodeAffinity": ArgsKind("NodeAffinityArgs", nodeaffinity.decode_args, nodeaffinity.validate_args),
        "NodeResourcesFit": ArgsKind("NodeResourcesFitArgs", fit.decode_args, fit.validate_args,
                                     validate_on_build=True),
        "VolumeBinding": ArgsKind("VolumeBindingArgs", volumebinding.decode_args, volumebinding.validate_args),
        "PodTopologySpread": ArgsKind("PodTopologySpreadArgs", podtopologyspread.decode_args,
                                      podtopologyspread.validate_args),
        "InterPodAffinity": ArgsKind("InterPodAffinityArgs", interpodaffinity.decode_args,
                                     interpodaffinity.validate_args),
        "DynamicResources": ArgsKind("DynamicResourcesArgs", _dra_args, _dra_validate),
        "DefaultPreemption": ArgsKind("DefaultPreemptionArgs", defaultpreemption.decode_args,
                                      defaultpreemption.validate_args),
        "NodeResourcesBalancedAllocation": ArgsKind("NodeResourcesBalancedAllocationArgs",
                                                    balanced_allocation.decode_args, balanced_allocation.validate_args),
    }


def in_tree_registry(release: Release | None = None) -> Registry:
    """The plugins ``release`` has (None: the default release), by name, and kplan's own; each
    one's extension points come from its class."""
    release = release or default_release()
    variants = VARIANTS[release.version]
    kinds = _args_kinds()
    return Registry([PluginSpec(name, variants.get(name, cls), kinds.get(name))
                     for name, cls in FACTORIES.items() if name in release.plugins]
                    # kplan's own opt-in plugins: registered, but not in the default MultiPoint set
                    + extra_plugin_specs())


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
