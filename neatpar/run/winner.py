"""What a run leaves when it ends: the winner's files (winner.json, .pickle, .dot, its models for
Unity, the substrate a hyperneat winner needs, league.json), the plots and MAP-Elites' archive,
and the lines that say where they are and how to play and watch them."""
from __future__ import annotations

import os
import sys

import numpy as np

from ..errors import ExportError
from ..episodes.env_evaluator import EnvEvaluator
from ..nn.es_hyperneat import discovered
from ..nn.es_substrate import EvolvableSubstrate
from ..record.archive import save_archive
from ..record.folder import SUBSTRATE_FILE, RunFolder, load_behaviors, load_substrate
from ..record.models import write_winner_models
from ..record.stats_file import StatsFile
from .hints import program, shown_path, watch_command
from .plan import Plan


def finish(plan: Plan, folder: RunFolder, evaluator: EnvEvaluator, stats: StatsFile, clip: str | None = None) -> None:
    """The winner files, its models for Unity and the plots of a run that ended, from its stats
    files (the simulator is no longer needed); what the run left, the commands that play and
    watch it and its latest clip, `clip` (when quiet, the winner and its file only)."""
    config, quiet = plan.config, plan.quiet
    evaluator.close()
    # The best genome found, as it was when it scored best (neat-python's best_genome is the
    # live object, whose fitness a later generation may have overwritten); in self-play the
    # league's winner.
    best = evaluator.winner
    files = winner_files(plan, folder, evaluator, best)
    plots = folder.plot(stats.rows())
    archive = evaluator.search.elites
    if archive is not None:
        plots += save_archive(folder.path, archive, config, evaluator.settings.qd_offset)
    winner = shown_path(os.path.join(folder.path, "winner.json"))
    if quiet:
        print(f"winner: genome {best.key}, fitness {best.fitness:.3f}{_fresh_note(evaluator, best)}: {winner}",
              flush=True)
        return
    print(f"\nwinner: genome {best.key}, fitness {best.fitness:.3f}{_fresh_note(evaluator, best)}"
          f"{_league_note(evaluator)}")
    if evaluator.curriculum.summary():
        print(f"lessons at the end: {evaluator.curriculum.summary()}")
    for path in files + plots:
        print(f"  {path}")
    print(f"\nplay it: {program()} play --config {shown_path(plan.run.config_path)} --genome {winner}")
    if archive is not None and archive.cells:
        index = ",".join(str(int(i)) for i in np.unravel_index(archive.filled()[0], archive.grid.bins))
        print(f"any elite: {program()} export --config {shown_path(plan.run.config_path)} --genome "
              f"{shown_path(os.path.join(folder.path, 'archive.json'))} --cell {index} --out elite.onnx")
    if clip is not None:
        print(f"see it: {shown_path(clip)}")
    print(f"watch it: {watch_command(folder.path)}", flush=True)


def show_best_so_far(files: list[str]) -> None:
    """Where an interrupted run left its best genome so far (one winner.json, or one a population)."""
    winners = [path for path in files if os.path.basename(path) == "winner.json"]
    if winners:
        print(f"best genome so far: {', '.join(shown_path(path) for path in winners)}", flush=True)


def winner_files(plan: Plan, folder: RunFolder, evaluator: EnvEvaluator, best) -> list[str]:
    """`best`'s files in the run folder (winner.json, .pickle, .dot), with its models for Unity,
    the path of the substrate its network needs (hyperneat) and league.json (self-play)."""
    score = evaluator.validation.score if best is evaluator.validation.winner else None
    files = folder.save_winner(best, plan.config, None if score is None else score.describe())
    geometry = evaluator.geometry or load_substrate(folder.path)
    if isinstance(geometry, EvolvableSubstrate):   # the search's parameters with the winner's discovered network
        folder.save_substrate(geometry.with_winner(discovered(best, plan.config, geometry)))
    substrate = os.path.join(folder.path, SUBSTRATE_FILE)   # with winner.json, all a hyperneat winner's network needs
    if os.path.isfile(substrate):
        files.append(substrate)
    if evaluator.selfplay is not None:
        files.append(folder.save_league(evaluator.selfplay.describe()))
    try:
        files += write_winner_models(best, plan.config, plan.settings, load_behaviors(folder.path) or {},
                                     folder.path, geometry)
    except ExportError as error:  # e.g. a function registered on the config: the run itself is fine
        print(f"neatpar: warning: no winner.onnx: {error}", file=sys.stderr)
    return files


def final_round_robin(evaluator: EnvEvaluator, quiet: bool) -> None:
    """A self-play run's final round-robin, announced (it plays games after the last generation)."""
    selfplay = evaluator.selfplay
    if selfplay is not None and evaluator.settings.league_final_games:
        if not quiet:
            sizes = " and ".join(str(len(league.members)) for league in selfplay.leagues.values())
            print(f"final round-robin of the league's {sizes} members ({evaluator.settings.league_final_games} games a "
                  f"pair) ...", flush=True)
        evaluator.final_round_robin()


def _fresh_note(evaluator: EnvEvaluator, best) -> str:
    """A validated winner's score on fresh episodes."""
    score = evaluator.validation.score
    if score is None or best is not evaluator.validation.winner:
        return ""
    return f" (training), {score.fitness:.3f} on {score.episodes} fresh episodes"


def _league_note(evaluator: EnvEvaluator) -> str:
    """How a self-play winner was chosen."""
    if evaluator.selfplay is None:
        return ""
    side = evaluator.selfplay.sides[0]
    member, scores = evaluator.selfplay.winner(side), evaluator.selfplay.scores.get(side)
    how = f"the final round-robin's best (mean result {scores[member.number]:.3f})" if scores else \
        "the league's best-rated member"
    return f" in its generation; {how}, ELO {member.rating:.1f}"
