"""The six phases, each in its own module, in the order a cycle runs them (see tempera.dream.cycle)."""
