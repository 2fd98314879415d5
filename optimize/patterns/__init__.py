"""Named StableHLO rewrite patterns, one table (``PATTERNS``), applied by the ``patterns`` pass.

Each family lives in its own module; importing this package registers them all, in this order
(the order in which the greedy driver tries patterns of equal benefit)."""

# isort: skip_file
from ._registry import PATTERNS, Pattern, apply_patterns, enabled, pattern  # noqa: F401
from . import algebraic  # noqa: F401,E402
from . import select  # noqa: F401,E402
from . import constants  # noqa: F401,E402
from . import slicing  # noqa: F401,E402
from . import layout  # noqa: F401,E402
from . import control_flow  # noqa: F401,E402
from . import dot  # noqa: F401,E402
from . import reduce  # noqa: F401,E402
from . import gather_scatter  # noqa: F401,E402
from . import linalg  # noqa: F401,E402
