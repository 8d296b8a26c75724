"""`python -m neatpar.cli`: the `neatpar` command."""
import sys

from .main import main

sys.exit(main())
