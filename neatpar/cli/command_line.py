"""The `neatpar` command's line: `evolve` (a run: neatpar/run/, as neatpar.evolve() makes one from
Python), `play` and `export` (genome_commands.py).

Exit status: 0 done, 2 bad input (one line naming the fix), 1 failure during the run (also
complete extinction, with the run folder complete), 130 after Ctrl+C, 143 after SIGTERM and 129
when the terminal closes (SIGHUP) at any moment (a checkpoint of the interrupted generation is
saved once one has started).
"""
from __future__ import annotations

import argparse
import logging
import sys

from ..config.settings_model import flags
from ..errors import ConfigError, NeatparError, Terminated
from ..version import __version__
from ..run.interrupts import exit_status
from ..run.plan import RunRequest
from ..run.start import run
from .genome_commands import export, play

SECURITY_NOTE = (
    "Checkpoints and .pickle genomes are pickles, and loading a pickle runs code: neatpar only loads "
    "the checkpoint you name with --resume and the genome file you name with --genome. Share "
    "winners as winner.json, which loads without pickle.")


def _positive(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not an integer") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"{value} must be at least 1")
    return value


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="neatpar", description="Parallel NEAT neuroevolution for Unity ML-Agents "
                                     "and Gymnasium environments.", epilog=SECURITY_NOTE)
    parser.add_argument("--version", action="version", version=f"neatpar {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    e = sub.add_parser("evolve", help="evolve a population on the environment of a config", epilog=SECURITY_NOTE)
    e.add_argument("--config", help="neat-python config file with a [neatpar] section (with --resume: the run's "
                   "own, stored in its checkpoints)")
    e.add_argument("--out", help="run folder (default: runs/CONFIG-TIMESTAMP; with --resume, the checkpoint's run)")
    e.add_argument("--resume", metavar="CHECKPOINT", help="continue a run from one of its checkpoints, with the "
                   "run's own settings (flags typed again may extend --generations or change where it runs)")
    e.add_argument("--quiet", action="store_true", help="no progress lines: only the run folder, the winner and "
                   "errors")
    for f in flags():
        options = getattr(f.metadata["reader"], "options", None)
        shown = f.metadata["shown_default"]
        e.add_argument("--" + f.name.replace("_", "-"), dest=f.name,
                       metavar="{" + ",".join(options) + "}" if options else f.name.upper(),
                       help=f"{f.metadata['help']} (default: [neatpar] {f.name}"
                            f"{'' if shown is None else f', else {shown}'})")
    p = sub.add_parser("play", help="run a saved genome on the environment of a config", epilog=SECURITY_NOTE)
    p.add_argument("--config", required=True, help="neat-python config file with a [neatpar] section")
    p.add_argument("--genome", required=True, help="winner.json (recommended) or winner.pickle")
    p.add_argument("--episodes", type=_positive, help="episodes to play (default: 5)")
    p.add_argument("--video", metavar="FILE", help="record one episode (the one --episodes 1 plays) as FILE: .mp4 "
                   "(with the video extra) or .gif, by the name")
    p.add_argument("--graphics", action="store_true", help="a Unity build: show the game in its own window at "
                   "real-time speed (time scale 1, no -nographics)")
    p.add_argument("--cell", metavar="I,J", help="with --genome RUN/archive.json (search = map-elites): the "
                   "elite of this cell, its index per descriptor dimension")
    x = sub.add_parser("export", help="write a saved genome as an ONNX model for a Unity ML-Agents Agent",
                       epilog=SECURITY_NOTE)
    x.add_argument("--config", required=True, help="neat-python config file with a [neatpar] section")
    x.add_argument("--genome", required=True, help="winner.json (recommended) or winner.pickle; the layouts come "
                   "from behaviors.json beside it, else from launching the environment once")
    x.add_argument("--cell", metavar="I,J", help="with --genome RUN/archive.json (search = map-elites): the "
                   "elite of this cell, its index per descriptor dimension")
    x.add_argument("--out", required=True, help="the .onnx file to write")
    x.add_argument("--behavior", help="the behavior to export for (default: the config's only population behavior)")
    return parser


def run_request(args: argparse.Namespace) -> RunRequest:
    """What `neatpar evolve`'s parsed arguments ask for (the only reader of them)."""
    given = tuple((f.name, getattr(args, f.name)) for f in flags() if getattr(args, f.name) is not None)
    return RunRequest(config=args.config, resume=args.resume, flags=given, out=args.out, quiet=args.quiet)


def evolve(args: argparse.Namespace) -> int:
    """`neatpar evolve`: the run its arguments ask for; its exit status."""
    return run(run_request(args)).exit_status


class _WarningLines(logging.StreamHandler):
    """neatpar's warnings as `neatpar: warning: ...` lines on sys.stderr as it is when one comes
    (a notebook or a test may have swapped it since the handler was added)."""

    def __init__(self):
        super().__init__()
        self.setFormatter(logging.Formatter("neatpar: warning: %(message)s"))

    @property
    def stream(self):
        return sys.stderr

    @stream.setter
    def stream(self, value) -> None:
        pass


def _show_warnings() -> None:
    """neatpar's warnings (a relaunched simulator, unlisted behaviors, ...) as one line each on
    stderr, however often main runs in one process (a notebook's cells)."""
    logger = logging.getLogger("neatpar")
    if not any(isinstance(h, _WarningLines) for h in logger.handlers):
        logger.addHandler(_WarningLines())
    logger.setLevel(logging.WARNING)
    logger.propagate = False


def main(argv: list[str] | None = None) -> int:
    try:
        _show_warnings()
        parser = build_parser()
        args = parser.parse_args(argv)
        if args.command is None:
            parser.print_help()
            return 0
        return {"evolve": evolve, "play": play, "export": export}[args.command](args)
    except (KeyboardInterrupt, Terminated) as stop:  # before a run began, or in play / export
        print("\ninterrupted", file=sys.stderr)
        return exit_status(stop)
    except ConfigError as error:
        print(f"neatpar: error: {error}", file=sys.stderr)
        return 2
    except NeatparError as error:
        print(f"neatpar: error: {error}", file=sys.stderr)
        return 1


if __name__ == "__main__":
    sys.exit(main())

