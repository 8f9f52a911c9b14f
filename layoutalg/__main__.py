"""``python -m layoutalg``: the command-line interface (:mod:`layoutalg.cli`)."""

import sys

from .cli import main

sys.exit(main())
