"""`python -m neatpar.cli`: the `neatpar` command."""
import sys

from .command_line import main

sys.exit(main())
