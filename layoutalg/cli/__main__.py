"""``python -m layoutalg.cli``: the same as ``python -m layoutalg``."""

import sys

from . import main

sys.exit(main())
