"""Entry point of the simulator builds: python -m neatpar_sim TASK [Unity-style arguments]."""
import sys

from .player import main

sys.exit(main())
