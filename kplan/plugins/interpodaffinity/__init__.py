"""InterPodAffinity (plugins/interpodaffinity, v1.34.1)."""

from kplan.plugins.interpodaffinity.plugin import NAME, InterPodAffinity, decode_args, validate_args

__all__ = ["NAME", "InterPodAffinity", "decode_args", "validate_args"]
