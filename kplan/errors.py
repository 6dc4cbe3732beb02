"""The one exception family of kplan: user mistakes, worded for the user.

Scheduling outcomes are never exceptions (they are Statuses); only input, configuration and
environment problems are. The CLI is the only place that catches them.
"""

from __future__ import annotations


class KplanError(Exception):
    """A problem the user can fix; the message is printed as one line, without a traceback."""

    exit_code = 2


class InputError(KplanError):
    """A manifest, snapshot or option could not be understood."""


class ConfigError(KplanError):
    """A KubeSchedulerConfiguration is invalid, with kube-scheduler's own wording."""


class ClusterAccessError(KplanError):
    """The live cluster could not be reached or read."""

    exit_code = 3


class UnsupportedError(KplanError):
    """The input uses a feature kplan does not model; simulating without it would mislead."""


class OutputError(KplanError):
    """The result could not be written (a full disk, ``> /dev/full``, an output file that cannot be
    created): the reason in one line, exit code 2, like any other input the run cannot use."""
