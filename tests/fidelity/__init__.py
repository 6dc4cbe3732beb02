"""Differential testing of kplan against the real kube-scheduler (issue 35).

``generate`` makes seeded conformance-style scenarios, ``differential`` runs them through kplan
and the oracle (``oracle/bin/kube-scheduler-oracle-<release>``) and shrinks every difference to a
small reproduction, ``expected`` writes each release's results for the public conformance
scenarios and the change report. ``scenario`` holds the folder format and the comparison both
share.
"""
