"""NodeResourcesFit and NodeResourcesBalancedAllocation (plugins/noderesources)."""
