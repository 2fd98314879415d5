"""eqsat tests: never calibrate the cost model (use the default table), and make the
helpers module importable."""

import os
import sys

os.environ.setdefault("REACTANT_EQSAT_CALIBRATE", "0")
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
