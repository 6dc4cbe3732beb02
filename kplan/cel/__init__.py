"""CEL, as Kubernetes evaluates DRA device selectors (k8s.io/dynamic-resource-allocation/cel):
compile a selector (parse, cel-go's type check, cost limit), build a device's variables, evaluate.

The DRA plugin (kplan.plugins.dra) evaluates selectors while it allocates; the validation of
ResourceClaims and DeviceClasses (kplan.validation) compiles them as the API server does. Both use
only the names below. Inside the package, imports point one way:

- ``values``: the library error, cel-go's optional, the Kubernetes types' marker, the one equality;
- ``library`` (strings, lists, sets, regex, optionals), ``net`` (IP, CIDR, URL), ``formats``
  (``format.named``), ``strformat`` (``string.format``): the Kubernetes CEL libraries;
- ``check``: cel-go's static type check of a compiled selector;
- ``interpreter``: the evaluator (cel-python) with the libraries, the macros and the runtime cost.
"""

from kplan.cel.interpreter import (
    COST_EXCEEDED,
    MAX_COST,
    CelError,
    compile_selector,
    device_activation,
    evaluate,
    evaluate_with_cost,
)

__all__ = ["COST_EXCEEDED", "MAX_COST", "CelError", "compile_selector", "device_activation", "evaluate",
           "evaluate_with_cost"]
