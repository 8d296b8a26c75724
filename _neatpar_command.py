"""The `neatpar` command, the one way it starts (the console script, and `python -m neatpar`
through neatpar/__main__.py): neatpar.cli's main, with Ctrl+C (and SIGTERM, a closed terminal's SIGHUP,
and Windows' SIGBREAK) held back while Python imports neatpar, so that they end the command quietly
with exit status 130 (143, 129) as at every later moment of a run. Raised inside the initialization of a C extension (numpy's, for
one), a KeyboardInterrupt turns into an ImportError, is lost, or crashes the interpreter. The
signals are neatpar.processes.stop_signals(), named here because importing neatpar is what they are
held back for."""
import signal
import sys

STOP_SIGNALS = ("SIGINT", "SIGTERM", "SIGHUP", "SIGBREAK")   # SIGHUP: POSIX only; SIGBREAK: Windows only


def main() -> int:
    caught = []
    held = {sig: signal.signal(sig, lambda signum, frame: caught.append(signum))
            for sig in (getattr(signal, name) for name in STOP_SIGNALS if hasattr(signal, name))}
    try:
        from neatpar.cli import main as run
    finally:
        for sig, previous in held.items():
            signal.signal(sig, previous)
    if caught:
        first, hangup = caught[0], getattr(signal, "SIGHUP", None)
        if first != hangup:   # a closed terminal takes no more output
            sys.stderr.write("\ninterrupted\n")
        return 128 + (first if first in (signal.SIGINT, hangup) else signal.SIGTERM)
    return run()
