"""The JSON Schema of kplan's result documents, generated from their typed classes.

``kplan.dev_v1alpha1.json`` next to this module is the schema shipped with the package (and
published in docs/output-formats.md); a test checks that it equals what ``generate()`` makes
now. After changing a document class, regenerate it with::

    python -m kplan.report.schema
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

from kplan.report.capacity import CapacityDocument
from kplan.report.codec import json_schema
from kplan.report.document import API_VERSION, SimulationDocument
from kplan.report.explain import ExplanationDocument
from kplan.report.sweep import SweepDocument
from kplan.report.whatif import WhatIfDocument

#: every document kplan writes with -o json / -o yaml, by its ``kind``
DOCUMENTS: dict[str, type] = {
    "SimulationResult": SimulationDocument,
    "WhatIfResult": WhatIfDocument,
    "CapacityResult": CapacityDocument,
    "SweepResult": SweepDocument,
    "PodExplanation": ExplanationDocument,
}

SCHEMA_FILE = Path(__file__).with_name("kplan.dev_v1alpha1.json")


def generate() -> dict[str, Any]:
    return json_schema(tuple(DOCUMENTS.values()), schema_id=f"https://kplan.dev/schemas/{API_VERSION}.json",
                       title=f"kplan result documents ({API_VERSION})",
                       description="The documents kplan writes with -o json and -o yaml: SimulationResult (simulate), "
                                   "WhatIfResult (whatif), CapacityResult (capacity), SweepResult (sweep) and "
                                   "PodExplanation (explain pod), told apart by their kind.")


def text() -> str:
    return json.dumps(generate(), indent=2) + "\n"


def shipped() -> dict[str, Any]:
    loaded: dict[str, Any] = json.loads(SCHEMA_FILE.read_text())
    return loaded


def main() -> None:
    SCHEMA_FILE.write_text(text())
    print(f"wrote {SCHEMA_FILE}", file=sys.stderr)


if __name__ == "__main__":
    main()
