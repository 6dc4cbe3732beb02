"""Input and output: manifests, snapshots, scheduler configuration, live clusters."""
