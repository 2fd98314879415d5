"""Differential testing: seeded random NumPy programs run in NumPy and in reactant (compiled in
every loop mode and optimization level, eagerly, and through reverse-mode gradients); any
difference in results or in the final state of the arguments is a bug (the first law)."""
