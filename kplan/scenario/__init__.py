"""The parsed inputs of a run and the scenarios built from them: engine code, no I/O.

``inputs``: ``Inputs`` and ``classify`` (every object parsed once into its typed form);
``build``: ``settle`` (what admission decides once, at load) and ``build_scenario`` (a run's
snapshot and pending pods). kplan.io reads the objects and applies the manifests onto the inputs;
kplan.whatif's Planner builds and runs scenarios of them, changed or not.
"""

from kplan.scenario.build import Scenario, build_scenario, settle
from kplan.scenario.inputs import Inputs, classify

__all__ = ["Inputs", "Scenario", "build_scenario", "classify", "settle"]
