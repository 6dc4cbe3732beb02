"""PodTopologySpread (plugins/podtopologyspread, v1.34.1)."""

from kplan.plugins.podtopologyspread.plugin import NAME, PodTopologySpread, decode_args, validate_args

__all__ = ["NAME", "PodTopologySpread", "decode_args", "validate_args"]
