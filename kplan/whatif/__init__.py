"""What-if planning: changes to the parsed inputs as pure deltas, the diff of two simulation
results, the monotone searches over simulations (until-fit, explain's node count) and the
replica fill of ``kplan capacity``. Scenario building is handed in by the caller, so nothing
here reads files.
"""
