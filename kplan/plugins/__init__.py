"""The in-tree plugin registry (pkg/scheduler/framework/plugins/registry.go), written out by hand.

Each entry names the plugin's class and its args kind when it has one; the extension points
it implements are those of its class (``kplan.framework.registry.points_of``), less those its
release's rules leave out. One class per plugin serves every release: where a formula changed,
the plugin decodes its rules at the release (``release.plugin_rules``) in its constructor.
"""

from __future__ import annotations

from functools import partial

from kplan.framework.features import Gate
from kplan.framework.registry import ArgsKind, PluginSpec, Registry
from kplan.framework.release import Release, default_release
from kplan.plugins import (
    defaultbinder,
    defaultpreemption,
    dynamicresources,
    imagelocality,
    interpodaffinity,
    nodeaffinity,
    nodedeclaredfeatures,
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
    "NodeDeclaredFeatures": nodedeclaredfeatures.NodeDeclaredFeatures,
}


def _args_kinds(release: Release) -> dict[str, ArgsKind]:
    """The args kinds of the in-tree plugins that have one, by plugin name (upstream's
    configuration scheme registers ``<Name>Args`` beside the registry). Two of them decode and
    validate by the release's feature gates, as upstream's defaulting reads the gates and its
    validation takes them as options (VolumeBindingArgsValidationOptions, feature.Features)."""
    capacity_scoring = release.enabled(Gate.STORAGE_CAPACITY_SCORING)
    filter_timeout = release.enabled(Gate.DRA_SCHEDULER_FILTER_TIMEOUT)
    binding_timeout = release.enabled(Gate.DRA_DEVICE_BINDING_CONDITIONS) and release.enabled(
        Gate.DRA_RESOURCE_CLAIM_DEVICE_STATUS)
    return {
        "NodeAffinity": ArgsKind("NodeAffinityArgs", nodeaffinity.decode_args, nodeaffinity.validate_args),
        "NodeResourcesFit": ArgsKind("NodeResourcesFitArgs", fit.decode_args, fit.validate_args,
                                     validate_on_build=True),
        "VolumeBinding": ArgsKind("VolumeBindingArgs",
                                  partial(volumebinding.decode_args, storage_capacity_scoring=capacity_scoring),
                                  partial(volumebinding.validate_args, storage_capacity_scoring=capacity_scoring)),
        "PodTopologySpread": ArgsKind("PodTopologySpreadArgs", podtopologyspread.decode_args,
                                      podtopologyspread.validate_args),
        "InterPodAffinity": ArgsKind("InterPodAffinityArgs", interpodaffinity.decode_args,
                                     interpodaffinity.validate_args),
        "DynamicResources": ArgsKind("DynamicResourcesArgs",
                                     partial(dynamicresources.decode_args, filter_timeout=filter_timeout,
                                             binding_timeout=binding_timeout),
                                     partial(dynamicresources.validate_args, filter_timeout=filter_timeout,
                                             binding_timeout=binding_timeout)),
        "DefaultPreemption": ArgsKind("DefaultPreemptionArgs", defaultpreemption.decode_args,
                                      defaultpreemption.validate_args),
        "NodeResourcesBalancedAllocation": ArgsKind("NodeResourcesBalancedAllocationArgs",
                                                    balanced_allocation.decode_args, balanced_allocation.validate_args),
    }


def in_tree_registry(release: Release | None = None) -> Registry:
    """The plugins ``release`` has (None: the default release), by name, and kplan's own; each
    one's extension points come from its class."""
    release = release or default_release()
    kinds = _args_kinds(release)
    return Registry([PluginSpec(name, cls, kinds.get(name), rules=release.plugin_rules.get(name, {}))
                     for name, cls in FACTORIES.items() if name in release.plugins]
                    # kplan's own opt-in plugins: registered, but not in the default MultiPoint set
                    + extra_plugin_specs())

