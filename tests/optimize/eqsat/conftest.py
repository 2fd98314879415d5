"""eqsat tests: make the helpers module importable (tests/conftest.py turns calibration off)."""

import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
