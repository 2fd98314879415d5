"""The error the sharding layer raises for bad input (an axis not in the mesh, an indivisible
dimension, arrays of two meshes in one call...), naming the user's line."""

from __future__ import annotations

from ..ir.errors import ReactantError


class ShardingError(ReactantError, ValueError):
    """A mesh, sharding or collective that does not fit the arrays or the devices."""
