"""``python -m reactant.optimize in.mlir -o out.mlir -p O2 --stats`` (see ``cli.py``)."""

import sys

from .cli import main

if __name__ == "__main__":
    sys.exit(main())
