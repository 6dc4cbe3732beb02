"""The scheduler: one scheduling cycle, the queue on a logical clock, and the simulation run."""
