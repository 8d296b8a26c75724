"""Gymnasium environments as the runner's Environment (environment.py): N copies of one environment
played at once in this process, each copy an agent of one behavior named after the environment.

A copy plays one episode after another. When its episode ends (terminated, or truncated by a
TimeLimit: the environment's own or the one `max_steps` adds), the same step reports the end and
the first decision of the copy's next episode, as a Unity agent does. Episodes are seeded: after
`reset(seed)`, the k-th episode started (copies in order within a step) is reset with seed
`seed * 2**32 + k`, so a seeded run repeats exactly and any episode can be replayed alone.

Observations must be Box spaces (flattened, as float64). A Box of shape (H, W, C) is an image
(e.g. CarRacing-v3's 96 x 96 x 3): its Layout says so (a visual Sensor of that shape, which a
HyperNEAT substrate lays out as a grid), and with `image_size` (H', W') each image is shrunk by
averaging blocks of (H / H') x (W / W') pixels and a uint8 image's values are scaled to [0, 1],
as a camera's values reach a network in Unity. Network outputs become actions by the
action space: Discrete takes the argmax (plus the space's start), MultiDiscrete the argmax per
branch, Box clips each output to [-1, 1] and maps it linearly onto the space's bounds
(`low + (output + 1) / 2 * (high - low)`); a Box dimension with an infinite bound takes the
clipped output unchanged (then clipped to the finite bound, if one). Other spaces are refused.

For a clip, copies made with `GymSetup(frames=True)` have render_mode "rgb_array" (only then:
making them so costs nothing per step, but a clip is asked for rarely) and give the picture of a
copy at its decision (`capture`; on a machine without a display through SDL's dummy video
driver); an environment without that render mode is refused.

Gymnasium is an optional dependency (`pip install 'neatpar[gym]'`), imported on first use.
"""
from __future__ import annotations

import importlib
import math
import os
from dataclasses import dataclass
from typing import Any, Callable, Mapping, Sequence

import numpy as np

from ..config.settings_model import DEFAULT_COPIES
from ..config.targets import GYM_PREFIX, gym_behavior_name
from ..errors import ConfigError, EnvironmentMismatch, FramesUnavailable, one_line
from ..environment import Batch, Frames, Layout, Sensor
from .parameter_draws import ParameterDraws

INSTALL_HINT = "pip install 'neatpar[gym]' (gymnasium 1.4 with Box2D and pygame)"
SEED_STRIDE = 2 ** 32       # episode k after reset(seed) is seeded with seed * SEED_STRIDE + k
RENDER_MODE = "rgb_array"   # the render mode of copies that give pictures
DEFAULT_FPS = 30.0          # a clip's rate when the environment's metadata has no render_fps


def episode_seed(seed: int, k: int) -> int:
    """The seed of the k-th episode started after `reset(seed)`."""
    return seed * SEED_STRIDE + k


def gymnasium():
    """The gymnasium module, or a one-line ConfigError saying what to install."""
    try:
        return importlib.import_module("gymnasium")
    except ImportError:
        raise ConfigError(f"Gymnasium environments need gymnasium, which is not installed: {INSTALL_HINT}") from None


# ---------------------------------------------------------------- making environments

def make(target: str, kwargs: Mapping[str, Any] | None = None, max_steps: int | None = None):
    """One environment: `target` is a registered id ('LunarLander-v3', 'module:Id-v0' imports the
    module that registers it) or 'module:Class' for an Env subclass of your own; `kwargs` go to
    gymnasium.make. `max_steps` adds a TimeLimit of that many steps on top of the environment's
    own. Errors (unknown id, missing module or dependency, bad keyword) are one-line ConfigErrors."""
    gym = gymnasium()
    shown = GYM_PREFIX + target
    try:
        env = gym.make(_resolve(gym, target), **dict(kwargs or {}))
    except gym.error.DependencyNotInstalled as error:
        raise ConfigError(f"env = {shown} needs a package that is not installed ({one_line(error)}): "
                          f"{INSTALL_HINT}") from None
    except gym.error.Error as error:
        raise ConfigError(f"env = {shown} is not a Gymnasium environment: {one_line(error)}") from None
    except ModuleNotFoundError as error:
        raise ConfigError(f"env = {shown}: {one_line(error)}") from None
    except (TypeError, ValueError, AssertionError) as error:  # what environments raise for bad arguments
        if not kwargs:
            raise
        raise ConfigError(f"env_kwargs do not fit {shown}: {one_line(error)}") from None
    if max_steps is not None:
        env = gym.wrappers.TimeLimit(env, max_episode_steps=max_steps)
    return env


def _resolve(gym, target: str):
    """What gymnasium.make takes for `target`: an EnvSpec for 'module:Class', else the id."""
    module_name, sep, name = target.rpartition(":")
    if not sep:
        return target
    try:
        module = importlib.import_module(module_name)
    except ModuleNotFoundError as error:
        if error.name is not None and module_name.startswith(error.name):
            raise ConfigError(f"env = {GYM_PREFIX}{target}: no module named {module_name!r} (module:Class names an "
                              f"Env class of your own; the module must be importable)") from None
        raise
    found = module
    for part in name.split("."):  # a nested class: Outer.Inner
        found = getattr(found, part, None)
    if isinstance(found, type) and issubclass(found, gym.Env):
        return gym.envs.registration.EnvSpec(id=name, entry_point=found)
    if found is not None:
        raise ConfigError(f"env = {GYM_PREFIX}{target}: {module_name}.{name} is not a gymnasium.Env subclass")
    return target  # 'module:Id-v0': the module registers the id


# ---------------------------------------------------------------- spaces

def layout_of(name: str, observation_space, action_space, image_size: tuple[int, int] | None = None) -> Layout:
    """A behavior's Layout from its spaces (an (H, W, C) Box an image, shrunk to `image_size`);
    spaces a NEAT network cannot take are refused."""
    gym = gymnasium()
    if not isinstance(observation_space, gym.spaces.Box):
        raise EnvironmentMismatch(f"{name}'s observation space {observation_space} is not supported: neatpar takes "
                                  f"Box observations (flattened); wrap the environment in an Env class of your own "
                                  f"(e.g. with gymnasium.wrappers.FlattenObservation) and name it as module:Class")
    shape = tuple(int(d) for d in observation_space.shape)
    actions = _action_sizes(name, action_space)
    if len(shape) != 3:
        if image_size is not None:
            raise ConfigError(f"gym_image_size shrinks image observations, but {name} observes a Box of shape {shape}, "
                              f"not (height, width, channels): leave out gym_image_size")
        return Layout((int(math.prod(shape)),), *actions)
    if image_size is not None:
        if shape[0] % image_size[0] or shape[1] % image_size[1]:
            raise ConfigError(f"gym_image_size = {image_size[0]}x{image_size[1]} does not divide {name}'s {shape[0]} x "
                              f"{shape[1]} images into equal blocks: choose sizes that divide them (e.g. "
                              f"{shape[0] // 4}x{shape[1] // 4})")
        shape = (image_size[0], image_size[1], shape[2])
    return Layout.of_sensors((Sensor(shape, visual=True),), *actions)


def image_reader(observation_space, image_size: tuple[int, int] | None) -> Callable[[Any], np.ndarray]:
    """An observation as the network's inputs: flattened; an image first shrunk to `image_size` by
    block averages, a uint8 one scaled to [0, 1]."""
    if image_size is None or len(observation_space.shape) != 3:
        return np.ravel
    height, width, channels = observation_space.shape
    rows, columns = height // image_size[0], width // image_size[1]
    scale = 255.0 if observation_space.dtype == np.uint8 else 1.0

    def read(observation) -> np.ndarray:
        blocks = np.asarray(observation, np.float64).reshape(image_size[0], rows, image_size[1], columns, channels)
        return np.ravel(blocks.mean(axis=(1, 3)) / scale)
    return read


def _action_sizes(name: str, space) -> tuple[int, tuple[int, ...]]:
    """(continuous outputs, discrete branch sizes) of an action space."""
    spaces = gymnasium().spaces
    if isinstance(space, spaces.Discrete):
        return 0, (int(space.n),)
    if isinstance(space, spaces.MultiDiscrete):
        return 0, tuple(int(n) for n in np.ravel(space.nvec))
    if isinstance(space, spaces.Box):
        return int(math.prod(space.shape)), ()
    raise EnvironmentMismatch(f"{name}'s action space {space} is not supported: neatpar takes Discrete, "
                              f"MultiDiscrete and Box actions")


def action_mapper(space) -> Callable[[np.ndarray], Sequence]:
    """A function from network outputs (one row per copy) to one action per copy (see the module
    docstring for how each kind of space maps)."""
    spaces = gymnasium().spaces
    if isinstance(space, spaces.Discrete):
        start = int(space.start)
        return lambda outputs: (np.argmax(outputs, axis=1) + start).tolist()
    if isinstance(space, spaces.MultiDiscrete):
        return _multi_discrete(space)
    return _box(space)


def _multi_discrete(space) -> Callable[[np.ndarray], Sequence]:
    sizes = np.ravel(space.nvec).astype(np.int64)
    starts = np.ravel(space.start).astype(np.int64)
    edges = np.concatenate([[0], np.cumsum(sizes)])

    def actions(outputs: np.ndarray) -> Sequence:
        chosen = np.empty((len(outputs), len(sizes)), np.int64)
        for b in range(len(sizes)):
            chosen[:, b] = np.argmax(outputs[:, edges[b]:edges[b + 1]], axis=1)
        return list((chosen + starts).astype(space.dtype).reshape((len(outputs),) + space.shape))
    return actions


def _box(space) -> Callable[[np.ndarray], Sequence]:
    low = np.ravel(space.low).astype(np.float64)
    high = np.ravel(space.high).astype(np.float64)
    finite = np.isfinite(low) & np.isfinite(high)
    base, span = np.where(finite, low, 0.0), np.where(finite, high - low, 0.0)  # no inf arithmetic

    def actions(outputs: np.ndarray) -> Sequence:
        clipped = np.clip(outputs, -1.0, 1.0)
        mapped = np.where(finite, base + (clipped + 1.0) / 2.0 * span, np.clip(clipped, low, high))
        return list(mapped.astype(space.dtype).reshape((len(outputs),) + space.shape))
    return actions


# ---------------------------------------------------------------- the environment

@dataclass(frozen=True)
class GymSetup:
    """What a GymEnvironment makes its copies from."""
    target: str                            # registered id, 'module:Id-v0' or 'module:Class'
    kwargs: Mapping[str, Any] | None = None
    copies: int = DEFAULT_COPIES
    max_steps: int | None = None           # a TimeLimit of this many decisions, over the env's own
    frames: bool = False                   # copies made with render_mode "rgb_array", for pictures of them
    image_size: tuple[int, int] | None = None   # image observations shrunk to (height, width), uint8 scaled to [0, 1]


def check(setup: GymSetup) -> Layout:
    """Make one copy to check that the environment exists and has spaces neatpar takes; its Layout."""
    env = make(setup.target, setup.kwargs)
    try:
        return layout_of(gym_behavior_name(setup.target), env.observation_space, env.action_space, setup.image_size)
    finally:
        env.close()


def headless_pictures() -> None:
    """On a machine without a display, pygame's pictures (rgb_array renders draw on a pygame
    Surface) through SDL's dummy video driver: SDL's own drivers would print an error line there
    (no XDG_RUNTIME_DIR) and draw the same pictures. Where a display exists, or SDL_VIDEODRIVER is
    set, nothing changes."""
    if not any(os.environ.get(name) for name in ("DISPLAY", "WAYLAND_DISPLAY", "SDL_VIDEODRIVER")):
        os.environ["SDL_VIDEODRIVER"] = "dummy"


def check_frames(setup: GymSetup) -> None:
    """Refuse an environment that cannot give pictures (no "rgb_array" among its render modes)
    with a FramesUnavailable error naming the fix."""
    env = make(setup.target, setup.kwargs)
    try:
        modes = list(env.metadata.get("render_modes") or [])
    finally:
        env.close()
    if RENDER_MODE not in modes:
        raise FramesUnavailable(f"env = {GYM_PREFIX}{setup.target} cannot give pictures of its episodes: its render modes "
                                f"are {modes or 'none'}, without {RENDER_MODE!r}; give it one (list it in "
                                f"metadata['render_modes'] and return an RGB array from render() in that mode)")


def picture(image, name: str) -> np.ndarray:
    """An environment's render() as a frame: (height, width, 3) uint8 (an alpha channel is dropped)."""
    image = np.asarray(image)
    if image.ndim != 3 or image.shape[2] not in (3, 4) or image.dtype != np.uint8:
        raise FramesUnavailable(f"{name}'s render() in mode {RENDER_MODE!r} gave {image.dtype} of shape {image.shape}, "
                                f"not an RGB image: return (height, width, 3) uint8")
    return image[:, :, :3]


class GymEnvironment:
    """`setup.copies` copies of a Gymnasium environment as one behavior's agents (made by the
    first reset). Copy i is agent i; every playing copy asks for a decision every step.

    `expect(n)` says that of the episodes the next reset and the steps after it start, only the
    first n are needed: a copy whose episode ends after those have started reports its end and
    then rests (no decisions, no steps) until the following reset, so no step is spent on
    episodes nobody scores. A reset without a new expect() lets every copy play."""

    def __init__(self, setup: GymSetup):
        self.setup = setup
        self.behavior = gym_behavior_name(setup.target)
        self.seed: int | None = None   # the seed of the last reset that gave one (episode seeds derive from it)
        self.episodes = 0              # episodes started since then
        self._envs: list = []
        self._layout: Layout | None = None
        self._to_actions: Callable[[np.ndarray], Sequence] | None = None
        self._playing: list[int] = []  # copies that ask for decisions, in order
        self._actions: Sequence | None = None
        self._batch: Batch | None = None
        self._needed: int | None = None   # set by expect(), taken by the next reset
        self._left: int | None = None     # episodes that may still start until the next reset (None: any)
        self._frames: list[np.ndarray] = []   # pictures taken since take_frames
        self._read: Callable[[Any], np.ndarray] = np.ravel   # an observation as the network's inputs
        self._draws: ParameterDraws | None = None   # a parameter file's values: reset(options=...) of each episode

    def set_parameters(self, values: Mapping[str, Any]) -> None:
        """Environment parameters' values: from the next reset, each episode starts with
        `reset(options={name: value})`, a sampler's value drawn anew for each episode."""
        self._draws = ParameterDraws(values)

    def _open(self) -> None:
        kwargs = self.setup.kwargs
        if self.setup.frames:
            check_frames(self.setup)
            kwargs = {**(kwargs or {}), "render_mode": RENDER_MODE}
            headless_pictures()
        self._envs = [make(self.setup.target, kwargs, self.setup.max_steps) for _ in range(self.setup.copies)]
        first = self._envs[0]
        self._layout = layout_of(self.behavior, first.observation_space, first.action_space, self.setup.image_size)
        self._read = image_reader(first.observation_space, self.setup.image_size)
        self._to_actions = action_mapper(first.action_space)

    def expect(self, episodes: int) -> None:
        """Only the first `episodes` episodes that start from the next reset until the one after
        it are needed."""
        self._needed = episodes

    def reset(self, seed: int | None) -> None:
        """The copies start new episodes (as many as are needed). With a seed, episode seeds start
        again from it; without one they go on from the last seed (a fresh random one at first)."""
        if not self._envs:
            self._open()
        if seed is not None or self.seed is None:
            self.seed = int(seed) if seed is not None else int(np.random.SeedSequence().entropy) % SEED_STRIDE
            self.episodes = 0
        self._left, self._needed = self._needed, None
        count = len(self._envs) if self._left is None else min(len(self._envs), self._left)
        self._playing = list(range(count))
        observations = np.empty((count, self._layout.inputs))
        for i in self._playing:
            observations[i] = self._start(i)
        self._actions = None
        self._batch = Batch(np.arange(count), observations, np.zeros(count), np.zeros(0, np.int64), np.zeros(0),
                            np.zeros(0, bool), np.zeros((0, self._layout.inputs)))

    def _start(self, i: int) -> np.ndarray:
        """Copy i starts the next episode; its first observation."""
        seed = episode_seed(self.seed, self.episodes)
        if self._draws is None:
            observation, _ = self._envs[i].reset(seed=seed)
        else:
            observation, _ = self._envs[i].reset(seed=seed, options=self._draws.draw())
        self.episodes += 1
        if self._left is not None:
            self._left -= 1
        return self._read(observation)

    def poll(self) -> Mapping[str, Batch]:
        return {} if self._batch is None else {self.behavior: self._batch}

    def layout(self, behavior: str) -> Layout:
        return self._layout

    def act(self, behavior: str, outputs: np.ndarray) -> None:
        """One row of outputs per deciding copy, in poll order."""
        self._actions = self._to_actions(outputs)

    def step(self) -> None:
        """Each playing copy takes its action; a copy whose episode ends starts its next one at
        once, or rests when no more episodes are needed."""
        playing, actions = self._playing, self._actions
        if actions is None:  # no outputs this step: the actions of all-zero outputs
            actions = self._to_actions(np.zeros((len(playing), self._layout.outputs)))
        self._actions = None
        observations = np.empty((len(playing), self._layout.inputs))
        rewards = np.empty(len(playing))
        still, ended, ended_rewards, interrupted, finals = [], [], [], [], []
        for j, i in enumerate(playing):
            observation, reward, terminated, truncated, _ = self._envs[i].step(actions[j])
            if terminated or truncated:
                ended.append(i)
                ended_rewards.append(reward)
                interrupted.append(truncated and not terminated)
                finals.append(self._read(observation))   # as the network saw the others: a descriptor reads it
                if self._left is not None and self._left <= 0:
                    continue
                observations[len(still)], reward = self._start(i), 0.0
            else:
                observations[len(still)] = self._read(observation)
            rewards[len(still)] = reward
            still.append(i)
        self._playing = still
        self._batch = Batch(np.asarray(still, np.int64), observations[:len(still)], rewards[:len(still)],
                            np.asarray(ended, np.int64), np.asarray(ended_rewards, np.float64),
                            np.asarray(interrupted, bool),
                            np.array(finals, np.float64).reshape(len(ended), self._layout.inputs))

    def capture(self, behavior: str, agent: int) -> None:
        """The picture of copy `agent` now (render(): the state it decides on)."""
        if not self.setup.frames:
            raise FramesUnavailable(f"these copies of {self.behavior} were made without render_mode {RENDER_MODE!r}: "
                                    f"make them with GymSetup(frames=True) to take pictures of them")
        self._frames.append(picture(self._envs[agent].render(), self.behavior))

    def take_frames(self) -> Frames:
        frames, self._frames = self._frames, []
        fps = self._envs[0].metadata.get("render_fps") if self._envs else None
        return Frames(frames, float(fps or DEFAULT_FPS))

    def take_game_stats(self) -> dict:
        """A Gymnasium environment has no channel for statistics about itself: always {}."""
        return {}

    def close(self) -> None:
        """Close every copy (a later reset makes new ones)."""
        envs, self._envs, self._batch, self._playing = self._envs, [], None, []
        for env in envs:
            env.close()

    def kill(self) -> None:
        """Nothing runs outside this process: dropping the copies is enough."""
        self._envs, self._batch, self._playing = [], None, []

    @property
    def process_pid(self) -> int | None:
        return None
