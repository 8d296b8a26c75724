"""`python -m neatpar`: the `neatpar` command (as `python -m neatpar.cli`)."""
import sys

from .cli import main

sys.exit(main())
