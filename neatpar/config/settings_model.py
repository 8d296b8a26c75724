"""neatpar's settings: one model for the `[neatpar]` section, keyword arguments and CLI flags.

Every key is declared once, as a field of `Settings` (`setting(...)`): its default, its reader
(readers.py), its help text, whether it is also a flag of `neatpar evolve`, and whether a resumed
run may give it another value. Rules between settings are checked in `Settings.__post_init__`, so
every way of making or changing settings (the config file, `Settings(...)`, `dataclasses.replace`,
`Settings.with_changes`) goes through the same checks; the network kind's own rules are its entry's
(network_kinds.py). neat-python ignores the `[neatpar]` section, so one file configures both (files.py
reads it).
"""
from __future__ import annotations

import dataclasses
import os
from dataclasses import dataclass, field
from typing import Any, Literal, Mapping, get_args

import neat

from ..errors import ConfigError
from .behaviors import BehaviorRole, Role, behavior_files, roles_or_none
from .parameter_file import ParameterFile
from .network_kinds import KINDS, Network, NetworkKind, network_help, network_kind
from . import searches
from .readers import (Reader, Source, Where, address, arguments, boolean, choice, did_you_mean, existing_file,
                      fraction, integer, image_size, keyword_arguments, layer_sizes, number, optional, parameters)
from .targets import EnvKind, EnvTarget, environment, gym_behavior_name

Fitness = Literal["mean", "min", "max", "median", "sum"]
Inference = Literal["inprocess", "pool", "auto"]
Backend = Literal["local", "ray"]
NeatStep = Literal["neatpar", "neat-python"]
FITNESS_AGGREGATES = get_args(Fitness)
INFERENCE = get_args(Inference)
BACKENDS = get_args(Backend)
NEAT_STEPS = get_args(NeatStep)
ACTIVATIONS = tuple(neat.activations.ActivationFunctionSet().functions)   # neat-python's built-in functions
DEFAULT_COPIES = 64   # copies of a Gymnasium environment played at once when `agents` is not given


def setting(default: Any, reader: Reader, help: str, flag: bool = False, shown_default: Any = None,
            resumable: bool = False) -> Any:
    """A key of the settings, declared once: its default, how to read it, its help (also the CLI
    flag's, with `flag`), and whether a resumed run may give it another value (`resumable`: only
    keys that leave the generations' results as they are, config/run_settings.py).
    `shown_default` is what help texts name when the default (None) means a value chosen later."""
    metadata = {"reader": reader, "help": help, "flag": flag, "resumable": resumable,
                "shown_default": default if shown_default is None else shown_default}
    if default is dataclasses.MISSING:
        return field(metadata=metadata)
    return field(default=default, metadata=metadata)


REQUIRED = dataclasses.MISSING
BEHAVIORS_HELP = "each behavior's role: population, champion, league or a genome file"


# ---------------------------------------------------------------- the model

@dataclass(frozen=True)
class Settings:
    """The settings of a run, checked. Paths are absolute."""

    env: str | None = setting(REQUIRED, environment, "gymnasium:ID (a Gymnasium environment), a build path "
                                                     "(relative to the config file), or 'editor'")
    behaviors: tuple[BehaviorRole, ...] | None = setting(
        None, roles_or_none, BEHAVIORS_HELP, shown_default="required for a Unity build")  # a Gymnasium env has its own
    env_args: tuple[str, ...] = setting((), arguments, "extra command-line arguments for the build")
    env_kwargs: tuple[tuple[str, Any], ...] = setting((), keyword_arguments, "keyword arguments for "
                                                      "gymnasium.make, 'name = value' pairs of Python literals")
    gym_image_size: tuple[int, int] | None = setting(None, optional(image_size), "a Gymnasium environment's image "
                                                     "observations (a Box of shape (H, W, C)) shrunk to HxW by block "
                                                     "averages, uint8 values scaled to [0, 1]")
    agents: int | None = setting(None, optional(integer(1, 65536)), "copies of a Gymnasium environment played at "
                                                                    "once per process", flag=True,
                                 shown_default=DEFAULT_COPIES)
    max_steps: int = setting(1000, integer(1), "decisions of a population agent after which the runner "
                                               "ends the genome's episode")
    episodes_per_genome: int = setting(1, integer(1), "episodes each genome plays per generation")
    generations: int = setting(50, integer(1), "total generations of a run", flag=True, resumable=True)
    seed: int | None = setting(None, optional(integer(0, 2**31 - 1)), "seed of the run (the same seed repeats "
                                                                      "the run)", flag=True)
    network: Network = setting("feedforward", choice(tuple(KINDS)), network_help())
    ctrnn_decision_time: float = setting(0.1, number(), "seconds of game time one decision advances a CTRNN (in "
                                                        "Unity: Fixed Timestep x DecisionRequester period)")
    ctrnn_time_step: float = setting(0.02, number(), "a CTRNN's Euler step in seconds (the last step of a "
                                                     "decision may be shorter)")
    # network = hyperneat (nn/substrate.py, nn/hyperneat.py): the substrate and the query.
    substrate_hidden: str = setting("", layer_sizes, "hyperneat: the substrate's hidden layers, e.g. '8x8, 16' (a "
                                                     "grid of 8 x 8, then a line of 16); empty for none")
    substrate_coordinates: str | None = setting(None, existing_file, "hyperneat: a JSON file of node coordinates "
                                                "(inputs, hidden, outputs) replacing the default layout's")
    hyperneat_activation: str = setting("tanh", choice(ACTIVATIONS), "hyperneat: the activation of every hidden "
                                        "and output node of the substrate (neat-python's built-in functions)")
    hyperneat_weight_threshold: float = setting(0.2, fraction, "hyperneat: CPPN outputs of magnitude at most this "
                                                "give no connection")
    hyperneat_max_weight: float = setting(5.0, number(), "hyperneat: the largest magnitude of a substrate weight")
    hyperneat_bias: bool = setting(False, boolean, "hyperneat: the CPPN's second output gives each hidden and "
                                                   "output node its bias")
    hyperneat_leo: bool = setting(False, boolean, "hyperneat: the CPPN's last output expresses a connection only "
                                                  "where it is above 0 (link expression output)")
    # network = es-hyperneat (nn/es_substrate.py, nn/es_hyperneat.py): the search's parameters, PUREPLES' defaults.
    es_initial_depth: int = setting(1, integer(0, 10), "es-hyperneat: quadtree levels every search divides (PUREPLES' "
                                    "initial_depth)")
    es_max_depth: int = setting(2, integer(0, 10), "es-hyperneat: the deepest quadtree level a search divides to where "
                                "the weights vary (PUREPLES' max_depth)")
    es_variance_threshold: float = setting(0.03, number(positive=False), "es-hyperneat: a quad whose leaf weights vary "
                                           "more than this is searched further for links (variance_threshold)")
    es_band_threshold: float = setting(0.3, number(positive=False), "es-hyperneat: a quad becomes a link where its "
                                       "weight differs from its neighbours' by more than this (band_threshold)")
    es_iteration_level: int = setting(1, integer(0, 100), "es-hyperneat: rounds of search from the hidden nodes found "
                                      "(iteration_level)")
    es_division_threshold: float = setting(0.5, number(positive=False), "es-hyperneat: a quad is divided while its "
                                           "children's weights vary more than this (division_threshold)")
    es_max_weight: float = setting(5.0, number(), "es-hyperneat: the largest magnitude of a link's weight (max_weight)")
    es_activation: str = setting("sigmoid", choice(ACTIVATIONS), "es-hyperneat: the activation of every hidden and "
                                 "output node (neat-python's built-in functions)")
    fitness: Fitness = setting("mean", choice(FITNESS_AGGREGATES), "aggregate of a genome's episode returns")
    # The winner chosen on fresh episodes (episodes/validation.py).
    winner_candidates: int = setting(5, integer(1, 1000), "genomes of best training fitness since the last check "
                                     "that play fresh episodes with the winner to become it")
    winner_episodes: int = setting(32, integer(0, 100000), "fresh episodes each candidate and the winner play at a "
                                   "check; the best by the fitness aggregate of them is the winner (0: the winner is "
                                   "the best training fitness seen)", flag=True)
    winner_interval: int = setting(5, integer(1), "generations between checks of the winner on fresh episodes (and "
                                   "one at the run's end)")
    time_scale: float = setting(20.0, number(), "the engine's time scale")
    no_graphics: bool = setting(True, boolean, "run the build headless")
    timeout: float = setting(60.0, number(), "seconds to wait for the build to answer", resumable=True)
    checkpoint_interval: int = setting(5, integer(1), "checkpoint every K generations", resumable=True)
    video_interval: int = setting(0, integer(0), "a clip of the champion's episode every N generations and of the "
                                                 "run's last, in the run folder's videos/ and in TensorBoard (0: no "
                                                 "clips)", flag=True, resumable=True)
    worker_id: int = setting(0, integer(0, 60000), "first worker id tried for the build's port", resumable=True)
    env_parameters: tuple[tuple[str, float], ...] | ParameterFile = setting(
        (), parameters, "'name = number' pairs sent on the EnvironmentParameters side channel, or an ML-Agents "
                        "YAML file of environment_parameters: constants, samplers and curricula")
    inference: Inference = setting("inprocess", choice(INFERENCE), "where the networks run: in this process, "
                                   "on a spawn pool, or whichever measures faster", flag=True, resumable=True)
    workers: int = setting(2, integer(1, 256), "pool workers for inference = pool or auto", flag=True, resumable=True)
    envs: int = setting(1, integer(1, 1024), "simulators, each owned by its own env host (1 = one simulator "
                                             "in this process)", flag=True)
    backend: Backend = setting("local", choice(BACKENDS), "where env hosts run: local processes or Ray actors",
                               flag=True, resumable=True)
    address: str | None = setting(None, address, "Ray cluster address HOST:PORT for backend = ray; without one, "
                                                 "a local Ray instance", flag=True, resumable=True)
    neat_step: NeatStep = setting("neatpar", choice(NEAT_STEPS), "classes that make each next generation: "
                                  "neatpar's (the populations neat-python's make, faster) or neat-python's own")
    # Self-play (episodes/league.py); ML-Agents' self_play keys in generations.
    league_window: int = setting(10, integer(1, 1000), "past champions a league keeps (ML-Agents' window)")
    league_snapshot: int = setting(1, integer(1), "generations between snapshots of a population's strongest "
                                                  "genome into its league (ML-Agents' save_steps)")
    league_latest_ratio: float = setting(0.5, fraction, "probability that an opponent is the league's latest "
                                                        "member, else one drawn uniformly from the league "
                                                        "(ML-Agents' play_against_latest_model_ratio)")
    league_rating_games: int = setting(2, integer(1, 1000), "games the strongest genome of a generation plays "
                                       "against each league member for its rating (both sides in symmetric games)")
    league_final_games: int = setting(0, integer(0, 10000), "games of every pair of league members in a final "
                                      "round-robin that chooses the winner (0: none, the best-rated member wins)")
    league_swap_sides: bool = setting(False, boolean, "a genome plays each league opponent from both sides "
                                                      "(episodes alternate sides)")
    team_change: int = setting(10, integer(1), "with two league behaviors: generations one population evolves "
                                               "before the other's turn (ML-Agents' team_change)")
    neat_configs: tuple[tuple[str, str], ...] = setting(
        (), behavior_files, "'BehaviorName: file' pairs: the neat-python config of a league behavior's own "
                            "population when two league behaviors evolve (default: this config file)")
    # The search (neatpar/search/; its rules: searches.py).
    search: str = setting("fitness", choice(searches.SEARCHES), "what selection climbs: the fitness, novelty (how "
                          "unlike the others and the archive a genome behaves), novelty+fitness (a blend of both "
                          "ranks) or map-elites (the best genome of every cell of a grid over the descriptor)",
                          flag=True)
    descriptor: str | None = setting(None, searches.descriptor, "a genome's behaviour, averaged over its episodes, "
                                     "for the searches other than fitness")
    novelty_k: int = setting(15, integer(1, 10000), "nearest neighbours (population and archive) whose mean "
                                                    "distance is a genome's novelty")
    novelty_archive: str = setting("threshold", choice(searches.NOVELTY_ARCHIVES), "which descriptors the novelty "
                                   "archive keeps: those more novel than an adapting threshold, or drawn at random")
    novelty_threshold: float = setting(0.1, number(), "the novelty archive's initial threshold (it adapts to the "
                                                      "rate of additions)")
    novelty_probability: float = setting(0.02, fraction, "novelty_archive = random: each genome's chance to enter "
                                                         "the archive")
    novelty_weight: float = setting(0.5, fraction, "search = novelty+fitness: the weight of novelty's rank against "
                                                   "fitness' rank")
    descriptor_bounds: tuple[tuple[float, float], ...] | None = setting(
        None, searches.bounds, "search = map-elites: the grid's low and high per descriptor value")
    descriptor_bins: tuple[int, ...] | None = setting(None, searches.bins, "search = map-elites: the grid's cells "
                                                      "per descriptor value")
    map_elites_crossover: float = setting(0.5, fraction, "search = map-elites: the chance that a child has two "
                                                         "elite parents (else one, mutated)")
    qd_offset: float = setting(0.0, number(positive=False), "search = map-elites: subtracted from each elite's "
                                                            "fitness in the QD-score (set it at or below the lowest "
                                                            "fitness, so that the score only grows)")

    def __post_init__(self):
        # Direct construction and dataclasses.replace() are read like keyword arguments (reading
        # is idempotent, so values already read from a file pass unchanged).
        where = Where(Source.KEYWORD, ".")
        for f in dataclasses.fields(self):
            object.__setattr__(self, f.name, f.metadata["reader"](f.name, getattr(self, f.name), where))
        self._check_rules()

    def _check_rules(self) -> None:
        """Rules between settings."""
        if self.gym is None:
            self._check_unity_rules()
        else:
            self._check_gym_rules()
        if self.hosted and self.env is None:
            raise ConfigError("env = editor connects to the one Unity Editor: env hosts (envs > 1 or backend = ray) "
                              "each launch a build; set env to a build path or envs = 1")
        if self.env is None and self.worker_id != 0:
            raise ConfigError(f"worker_id = {self.worker_id} with env = editor: the Unity Editor connects on its own "
                              f"port (worker_id 0) only; leave worker_id out, or set env to a build path")
        if self.hosted and self.inference == "pool":
            raise ConfigError("inference = pool with env hosts: each host runs its networks in its own process; "
                              "set inference = inprocess (or envs = 1)")
        if self.address is not None and self.backend != "ray":
            raise ConfigError(f"address = {self.address} names a Ray cluster: use it with backend = ray "
                              f"(--backend ray)")
        self._check_league_rules()
        searches.check(self)
        self.network_kind.check(self)

    def _check_league_rules(self) -> None:
        roles = [r.role for r in self.behaviors]
        leagues, populations = roles.count(Role.LEAGUE), roles.count(Role.POPULATION)
        if not populations and leagues > 2:
            raise ConfigError(f"behaviors has {leagues} behaviors with the role 'league' and none with 'population': "
                              f"two league behaviors evolve a population each and take turns; give the others "
                              f"another role")
        evolving = [r.behavior for r in self.behaviors if r.role is Role.LEAGUE and not populations]
        for behavior, _ in self.neat_configs:
            if behavior not in evolving:
                raise ConfigError(f"neat_configs names {behavior!r}, but only the two league behaviors of an asymmetric "
                                  f"game (no population role) evolve populations of their own: "
                                  f"{', '.join(evolving) or 'this config has none'}")
        if self.league_swap_sides:
            if (populations, leagues) != (1, 1):
                raise ConfigError("league_swap_sides = true swaps the sides of one population behavior and one "
                                  "league behavior: give behaviors exactly one of each (or set league_swap_sides = "
                                  "false)")
            if self.episodes_per_genome % 2:
                raise ConfigError(f"league_swap_sides = true plays each opponent from both sides, but "
                                  f"episodes_per_genome = {self.episodes_per_genome} is odd: set it to an even number "
                                  f"(2 plays one opponent, 4 two)")

    def _check_unity_rules(self) -> None:
        if self.behaviors is None:
            raise ConfigError(f"behaviors is missing: {BEHAVIORS_HELP}")
        if self.env_kwargs:
            raise ConfigError(f"env_kwargs are keyword arguments for gymnasium.make, but env = {self.env} is a Unity "
                              f"build: pass its options with env_args, or set env = gymnasium:ID")
        if self.gym_image_size is not None:
            raise ConfigError("gym_image_size shrinks a Gymnasium environment's images; a Unity build's camera sets its "
                              "own width and height (CameraSensor): leave out gym_image_size")
        if self.agents is not None:
            raise ConfigError(f"agents = {self.agents} sets the copies of a Gymnasium environment; a Unity build "
                              f"has the agents its scene makes (the simulator builds take env_args = --agents N)")

    def _check_gym_rules(self) -> None:
        for name in ("env_args", "env_parameters"):   # a parameter file drives reset(options=...): envs/gym.py
            if getattr(self, name) and not isinstance(getattr(self, name), ParameterFile):
                raise ConfigError(f"{name} are for Unity builds; env = {self.env} is a Gymnasium environment: pass "
                                  f"its options as env_kwargs (or an ML-Agents YAML of environment_parameters, "
                                  f"passed to reset as options)")
        name = gym_behavior_name(self.gym)
        own = (BehaviorRole(name, Role.POPULATION),)
        if self.behaviors is None:
            object.__setattr__(self, "behaviors", own)
        elif self.behaviors != own:
            shown = ", ".join(f"{r.behavior}: {r.genome_file or r.role}" for r in self.behaviors)
            raise ConfigError(f"behaviors = {shown} does not fit env = {self.env}: a Gymnasium environment has one "
                              f"behavior, {name!r}, whose copies are the population; leave behaviors out")

    @property
    def network_kind(self) -> NetworkKind:
        """The kind of network the run evolves (config/network_kinds.py: the entry `network` names)."""
        return network_kind(self.network)

    @property
    def target(self) -> EnvTarget:
        """The environment `env` names (EnvTarget)."""
        return EnvTarget.of(self.env)

    @property
    def gym(self) -> str | None:
        """The Gymnasium environment (a registered id, 'module:Id' or 'module:Class'), or None for Unity."""
        target = self.target
        return target.name if target.kind is EnvKind.GYMNASIUM else None

    def with_role(self, role: Role) -> tuple[str, ...]:
        """The behaviors of `role`, in the config's order."""
        return tuple(r.behavior for r in self.behaviors if r.role is role)

    @property
    def population_behaviors(self) -> tuple[str, ...]:
        """The behaviors the genomes under evaluation drive, in the config's order."""
        return self.with_role(Role.POPULATION)

    @property
    def asymmetric(self) -> bool:
        """Two league behaviors and no population one: each league behavior evolves a population of
        its own (asymmetric self-play, episodes/league.py)."""
        return len(self.with_role(Role.LEAGUE)) == 2 and not self.population_behaviors

    @property
    def hosted(self) -> bool:
        """True when env hosts (processes or Ray actors) own the simulators."""
        return self.envs > 1 or self.backend == "ray"

    @classmethod
    def create(cls, values: Mapping[str, Any], source: Source = Source.KEYWORD, base: str = ".") -> "Settings":
        """Settings from text or Python values; unknown names and missing required ones are errors."""
        read = _read(values, source, base)
        missing = [f for f in dataclasses.fields(cls) if f.name not in read and (
            f.default is dataclasses.MISSING or (f.name == "behaviors" and not _is_gym(read.get("env"))))]
        if missing:
            raise ConfigError(f"{source.label(missing[0].name)} is missing: {missing[0].metadata['help']}")
        return cls(**read)

    def with_changes(self, source: Source = Source.KEYWORD, base: str = ".", **changes: Any) -> "Settings":
        """A copy with `changes` read and checked as `create` reads values. A new Gymnasium env
        brings its own behavior unless `behaviors` changes too."""
        read = _read(changes, source, base)
        if "env" in read and "behaviors" not in read and _is_gym(read["env"]):
            read["behaviors"] = None
        return dataclasses.replace(self, **read)

    def check_neat_config(self, neat_config: Any, source: str = "the neat config") -> None:
        """Rules between these settings and the neat-python config they run with (the network
        kind's, config/network_kinds.py; the search's, config/searches.py)."""
        self.network_kind.check_neat_config(self, neat_config, source)
        searches.check_neat_config(self, neat_config, source)


def _read(values: Mapping[str, Any], source: Source, base: str) -> dict:
    """Each value read by its setting's reader; an unknown name is an error that suggests the close one."""
    where = Where(source, os.path.abspath(base))
    known = {f.name: f for f in dataclasses.fields(Settings)}
    unknown = sorted(set(values) - set(known))
    if unknown:
        raise ConfigError(f"{source.label(unknown[0])} is not a setting{did_you_mean(unknown[0], known)}; "
                          f"the settings are {', '.join(known)}")
    return {name: known[name].metadata["reader"](name, value, where) for name, value in values.items()}


def _is_gym(env: str | None) -> bool:
    return EnvTarget.of(env).kind is EnvKind.GYMNASIUM


def flags() -> list[dataclasses.Field]:
    """The settings that are also command-line flags of `neatpar evolve`."""
    return [f for f in dataclasses.fields(Settings) if f.metadata["flag"]]




def resumable(name: str) -> bool:
    """Whether a resumed run may give the key `name` another value (its declaration says; a key
    the model does not have may not)."""
    return any(f.name == name and f.metadata["resumable"] for f in dataclasses.fields(Settings))
