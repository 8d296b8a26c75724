"""`python -m neatpar`: the `neatpar` command, through the console script's own entry
(_neatpar_command.main), so that both start one way; only the package's own import comes first."""
import sys

from _neatpar_command import main

sys.exit(main())
