"""The scheduling framework: statuses, extension-point protocols, cycle state, profiles."""
