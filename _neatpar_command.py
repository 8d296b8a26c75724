"""The `neatpar` command: neatpar.cli's main, with Ctrl+C (and SIGTERM) held back while Python
imports neatpar, so that they end the command quietly with exit status 130 (143) as at every later
moment of a run. Raised inside the initialization of a C extension (numpy's, for one), a
KeyboardInterrupt turns into an ImportError, is lost, or crashes the interpreter."""
import signal
import sys


def main() -> int:
    caught = []
    held = {sig: signal.signal(sig, lambda signum, frame: caught.append(signum))
            for sig in (signal.SIGINT, signal.SIGTERM)}
    try:
        from neatpar.cli import main as run
    finally:
        for sig, previous in held.items():
            signal.signal(sig, previous)
    if caught:
        sys.stderr.write("\ninterrupted\n")
        return 128 + caught[0]
    return run()
