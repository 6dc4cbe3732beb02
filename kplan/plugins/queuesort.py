"""PrioritySort (pkg/scheduler/framework/plugins/queuesort/priority_sort.go, v1.34.1).

Higher priority first; equal priorities by earlier queue timestamp.
"""

from __future__ import annotations

from typing import Any

from kplan.framework.interfaces import QueueSortPlugin
from kplan.plugins.helper import PluginBase

NAME = "PrioritySort"


class PrioritySort(PluginBase, QueueSortPlugin):
    name = NAME

    def less(self, a: Any, b: Any) -> bool:
        if a.pod.priority != b.pod.priority:
            return bool(a.pod.priority > b.pod.priority)
        return bool(a.timestamp < b.timestamp)
