"""The devices a mesh may use (jax's device objects: those of every process after
``reactant.distributed.initialize``)."""

from __future__ import annotations


def all_devices() -> list:
    import jax

    return list(jax.devices())
