"""The game side of ML-Agents' EnvironmentParameters, as com.unity.ml-agents has it.

EnvironmentParametersChannel.cs keeps one `Func<float>` per key: a float message stores a function
that returns the value, a sampler message (data type 1: int32 seed, int32 sampler type, then its
floats or its float list) stores a sampler made by Sampler.cs's SamplerFactory, which draws anew at
every `GetWithDefault` call. The samplers draw from .NET's `System.Random(seed)` (the legacy Knuth
subtractive generator that Unity's Mono and .NET's seeded constructor share), emulated here bit for
bit in `DotNetRandom`, so that a stand-in build draws the values a real player would.
"""
from __future__ import annotations

import math
from typing import Callable

import numpy as np
from mlagents_envs.side_channel.incoming_message import IncomingMessage

FLOAT, SAMPLER = 0, 1                           # EnvironmentDataTypes
UNIFORM, GAUSSIAN, MULTIRANGEUNIFORM = 0, 1, 2  # SamplerType

_MBIG = 2**31 - 1
_MSEED = 161803398


def _int32(value: int) -> int:
    """C#'s unchecked int arithmetic: wrap to a signed 32-bit value."""
    return (value + 2**31) % 2**32 - 2**31


class DotNetRandom:
    """`new System.Random(seed)`: the subtractive generator of .NET's reference source (Random.cs)."""

    def __init__(self, seed: int):
        seeds = [0] * 56
        subtraction = _MBIG if seed == -2**31 else abs(seed)
        mj = _int32(_MSEED - subtraction)
        seeds[55] = mj
        mk = 1
        for i in range(1, 55):
            ii = (21 * i) % 55
            seeds[ii] = mk
            mk = _int32(mj - mk)
            if mk < 0:
                mk += _MBIG
            mj = seeds[ii]
        for _ in range(1, 5):
            for i in range(1, 56):
                seeds[i] = _int32(seeds[i] - seeds[1 + (i + 30) % 55])
                if seeds[i] < 0:
                    seeds[i] += _MBIG
        self._seeds, self._next, self._nextp = seeds, 0, 21

    def internal_sample(self) -> int:
        """Random.InternalSample: the next integer in [0, int.MaxValue)."""
        self._next = 1 if self._next + 1 >= 56 else self._next + 1
        self._nextp = 1 if self._nextp + 1 >= 56 else self._nextp + 1
        value = _int32(self._seeds[self._next] - self._seeds[self._nextp])
        if value == _MBIG:
            value -= 1
        if value < 0:
            value += _MBIG
        self._seeds[self._next] = value
        return value

    def next(self) -> int:
        """Random.Next()."""
        return self.internal_sample()

    def next_double(self) -> float:
        """Random.NextDouble(): InternalSample() * (1.0 / int.MaxValue)."""
        return self.internal_sample() * (1.0 / _MBIG)


class RandomNormal:
    """ML-Agents' Inference/Utils/RandomNormal.cs: Marsaglia's polar method on System.Random,
    keeping the second value of each pair for the next call."""

    def __init__(self, seed: int, mean: float, stddev: float):
        self._random, self.mean, self.stddev = DotNetRandom(seed), mean, stddev
        self._spare: float | None = None

    def next_double(self) -> float:
        if self._spare is not None:
            spare, self._spare = self._spare, None
            return spare * self.stddev + self.mean
        while True:
            u = self._random.next_double() * 2.0 - 1.0
            v = self._random.next_double() * 2.0 - 1.0
            s = u * u + v * v
            if 0.0 < s < 1.0:
                break
        s = math.sqrt(-2.0 * math.log(s) / s)
        self._spare = u * s
        return v * s * self.stddev + self.mean


f32 = np.float32


def uniform_sampler(low: float, high: float, seed: int) -> Callable[[], float]:
    """SamplerFactory.CreateUniformSampler: min + (float)NextDouble() * (max - min), in floats."""
    random = DotNetRandom(seed)
    low, high = f32(low), f32(high)
    return lambda: float(f32(low + f32(random.next_double()) * f32(high - low)))


def gaussian_sampler(mean: float, stddev: float, seed: int) -> Callable[[], float]:
    """SamplerFactory.CreateGaussianSampler: (float)RandomNormal(seed, mean, stddev).NextDouble()."""
    normal = RandomNormal(seed, float(f32(mean)), float(f32(stddev)))
    return lambda: float(f32(normal.next_double()))


def multirange_sampler(intervals: list[float], seed: int) -> Callable[[], float]:
    """SamplerFactory.CreateMultiRangeUniformSampler: an interval picked by Multinomial(seed + 1)
    in proportion to its length (a float cumulative sum), then a uniform draw in it from
    System.Random(seed)."""
    random, picker = DotNetRandom(seed), DotNetRandom(seed + 1)
    lows = [f32(intervals[2 * i]) for i in range(len(intervals) // 2)]
    sizes = [f32(f32(intervals[2 * i + 1]) - lows[i]) for i in range(len(lows))]
    total = f32(0)
    for size in sizes:
        total = f32(total + size)
    cmf = [f32(size / total) for size in sizes]
    for i in range(1, len(cmf)):
        cmf[i] = f32(cmf[i] + cmf[i - 1])

    def draw() -> float:
        p = f32(f32(picker.next_double()) * cmf[-1])   # Multinomial.Sample
        chosen = 0
        while cmf[chosen] < p:
            chosen += 1
        return float(f32(lows[chosen] + f32(random.next_double()) * sizes[chosen]))
    return draw


class GameParameters:
    """Academy.Instance.EnvironmentParameters: what the EnvironmentParameters channel set."""

    def __init__(self):
        self._values: dict[str, Callable[[], float]] = {}
        self.kinds: dict[str, str] = {}   # key -> "float", "uniform", "gaussian", "multirangeuniform"

    def receive(self, payload: bytes) -> tuple[str, str]:
        """One channel message, as EnvironmentParametersChannel.OnMessageReceived reads it; the key
        and the kind of value it now holds."""
        message = IncomingMessage(payload)
        key = message.read_string()
        kind = message.read_int32()
        if kind == FLOAT:
            value = message.read_float32()
            self._values[key], self.kinds[key] = (lambda: value), "float"
        elif kind == SAMPLER:
            seed, sampler = message.read_int32(), message.read_int32()
            if sampler == UNIFORM:
                low, high = message.read_float32(), message.read_float32()
                self._values[key], self.kinds[key] = uniform_sampler(low, high, seed), "uniform"
            elif sampler == GAUSSIAN:
                mean, stddev = message.read_float32(), message.read_float32()
                self._values[key], self.kinds[key] = gaussian_sampler(mean, stddev, seed), "gaussian"
            elif sampler == MULTIRANGEUNIFORM:
                intervals = message.read_float32_list()
                self._values[key], self.kinds[key] = multirange_sampler(intervals, seed), "multirangeuniform"
            else:   # C# warns and stores a sampler of 0
                self._values[key], self.kinds[key] = (lambda: 0.0), "unknown"
        else:
            return key, "unknown"
        return key, self.kinds[key]

    def get_with_default(self, key: str, default: float) -> float:
        """EnvironmentParameters.GetWithDefault: the value, a sampler's next draw, or `default`."""
        value = self._values.get(key)
        return default if value is None else value()

    def keys(self) -> list[str]:
        return list(self._values)
