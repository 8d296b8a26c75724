"""A run's plan: everything a run decides before anything starts (lifecycle.py carries it out),
from its request (what `neatpar evolve` was typed with, or what `neatpar.evolve()` was called
with). A new run's settings come from its config file and the flags given; a resumed run's from
its checkpoint, where they are stored, checked against what was given again. Whatever can be
refused is refused here, before a run folder or a simulator exists."""
from __future__ import annotations

import dataclasses
import os
import time
from dataclasses import dataclass

import neat

from ..config.files import population_configs
from ..config.run_settings import RunSettings, resumed
from ..config.settings_model import Settings
from ..envs.gym import check_frames
from ..errors import ConfigError, FramesUnavailable
from ..record.checkpoint import Checkpoint, PopulationState, latest_checkpoint
from ..record.stats_file import STATS_FILE
from ..episodes.environments import gym_setup
from ..search.strategy import reproduction_type
from ..run_state import RunState


@dataclass(frozen=True)
class RunRequest:
    """What a run was asked for: a new run of the config file `config`, or the continuation of
    the checkpoint `resume` (with `config`, an earlier neatpar's checkpoint that stores no
    settings); `flags` are [neatpar] keys given beside the file (command-line flags, as typed);
    `out` the run folder (None: a default one); `quiet`: no progress lines."""
    config: str | None = None
    resume: str | None = None
    flags: tuple[tuple[str, str], ...] = ()
    out: str | None = None
    quiet: bool = False


@dataclass
class Start:
    """Where a run starts: its (first) population, new or restored, and the checkpoint a resumed
    run continues (the evaluator's state; in an asymmetric self-play run the other population,
    run/alternation.py)."""
    population: neat.Population
    checkpoint: Checkpoint | None = None

    @property
    def done(self) -> int:
        """The generations already done (an asymmetric run's: both populations' together)."""
        return 0 if self.checkpoint is None else self.checkpoint.generation

    @property
    def state(self) -> RunState | None:
        return None if self.checkpoint is None else self.checkpoint.evaluator

    @property
    def sides(self) -> dict[str, PopulationState] | None:
        return None if self.checkpoint is None else self.checkpoint.sides


@dataclass
class Plan:
    """Everything a run is made of before anything starts: its settings (as stored with the run),
    where it starts, its folder (`here`: the resumed checkpoint's own folder), the notes about
    settings a resume changed, whether it prints progress (not when `quiet`), the checkpoint it
    resumes from (`resume`, None for a new run), the run folder it came from (`history`: its stats
    files hold the generations before it) and whether `out` is a default name (`default_out`:
    another one is taken when a run started in the same second has it). An asymmetric self-play
    run's `configs` are its populations' neat configs (`config` is the first one's, the
    checkpoints' neat-python part)."""
    run: RunSettings
    config: neat.Config
    settings: Settings
    start: Start
    out: str
    here: bool = False
    notes: tuple[str, ...] = ()
    configs: dict | None = None
    quiet: bool = False
    resume: str | None = None
    history: str | None = None
    default_out: bool = False


def _default_out(config_path: str) -> str:
    stem = os.path.splitext(os.path.basename(config_path))[0]
    return os.path.join("runs", f"{stem}-{time.strftime('%Y%m%d-%H%M%S')}")


def _populations(config, settings: Settings, run: RunSettings) -> tuple[neat.Config, dict | None]:
    """The run's neat config and, in an asymmetric self-play run, its populations' from the texts
    stored with the run (the first league behavior's population is then the checkpoints'
    neat-python part)."""
    if not settings.asymmetric:
        return config, None
    configs = population_configs(settings, config, dict(run.population_texts))
    return next(iter(configs.values())), configs


def _check_clips(settings: Settings) -> None:
    """A run with clips (video_interval) on a Gymnasium environment that cannot give pictures is
    refused now (a Unity game says whether it sends frames only once launched: clips.py)."""
    if settings.video_interval and settings.gym is not None:
        try:
            check_frames(gym_setup(settings))
        except FramesUnavailable as error:
            raise ConfigError(f"video_interval = {settings.video_interval} records clips, but {error}; or set "
                              f"video_interval = 0") from None


def _breed_for_search(config: neat.Config, settings: Settings) -> None:
    """The reproduction the search breeds with: MAP-Elites' own (children of the archive's elites,
    the same [DefaultReproduction] section read), else the config's."""
    config.reproduction_type = reproduction_type(settings.search, config.reproduction_type)


def make_plan(request: RunRequest) -> Plan:
    """The run's plan from its request: its settings, start and folder; everything that can be
    refused is refused here, before the run folder or a simulator exists."""
    if request.resume:
        return _plan_resume(request)
    if request.config is None:
        raise ConfigError("--config is missing: give a neat-python config file with a [neatpar] section (see "
                          "configs/), or --resume CHECKPOINT to continue a run")
    run = RunSettings.from_file(request.config, dict(request.flags))
    config, settings = run.load()
    _check_clips(settings)
    _breed_for_search(config, settings)
    if settings.asymmetric:
        run = run.with_population_texts(settings)
    config, configs = _populations(config, settings, run)
    population = neat.Population(config, seed=settings.seed)
    return Plan(run, config, settings, Start(population), request.out or _default_out(request.config),
                configs=configs, quiet=request.quiet, default_out=request.out is None)


def _plan_resume(request: RunRequest) -> Plan:
    """A resumed run: the checkpoint's stored settings (checked against what was typed again), or,
    for a checkpoint of an earlier neatpar that stored none, the --config given."""
    if os.path.isdir(request.resume):   # a run folder: its latest checkpoint
        request = dataclasses.replace(request, resume=latest_checkpoint(request.resume))
    checkpoint = Checkpoint.load(request.resume)
    stored, notes = checkpoint.run_settings, []
    if request.config is not None and not os.path.isfile(request.config):
        raise ConfigError(f"config file {request.config!r} not found: leave out --config to continue the run with its "
                          f"own settings (stored in its checkpoints)")
    if stored is not None:
        run, notes = resumed(stored, request.config, dict(request.flags), request.resume)
    elif request.config is None:
        raise ConfigError(f"checkpoint {request.resume} holds no settings (an earlier neatpar wrote it): give the "
                          f"run's config with --config")
    else:
        run = RunSettings.from_file(request.config, dict(request.flags))
    config, settings = run.load()
    _check_clips(settings)
    _breed_for_search(config, settings)
    if settings.asymmetric and not run.population_texts:   # settings from --config: the files as they are now
        run = run.with_population_texts(settings)
    config, configs = _populations(config, settings, run)
    start = Start(checkpoint.restore(config, request.resume), checkpoint)
    if start.done >= settings.generations:
        raise ConfigError(f"checkpoint {request.resume} is at generation {start.done}, and the run has "
                          f"{settings.generations} generations: nothing to do; resume with --generations "
                          f"greater than {start.done}")
    home = os.path.dirname(os.path.dirname(os.path.abspath(request.resume)))
    out = os.path.abspath(request.out or home)
    if not (checkpoint.population.rows or os.path.isfile(os.path.join(home, STATS_FILE)) or settings.asymmetric):
        notes.append(f"no {STATS_FILE} beside checkpoint {request.resume} (its run folder's): the new {STATS_FILE} "
                     f"begins at generation {start.done}")
    return Plan(run, config, settings, start, out, here=out == home, notes=tuple(notes), configs=configs,
                quiet=request.quiet, resume=request.resume, history=home)
