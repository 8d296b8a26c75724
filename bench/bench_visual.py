"""Benchmark: visual observations, neatpar's decode (neatpar.envs.unity.pixels: PNGs in C, ISA-L's
inflate) against mlagents-envs 0.28's own (rpc_utils._process_maybe_compressed_observation:
Pillow), measured in one run:

1. decoding 256 observations of 84 x 84 camera-like images (about 11 KiB of PNG each), as they
   arrive (ObservationProtos): an RGB camera, a grayscale one (its RGB PNG averaged), a grid-sensor
   -like observation of 4 channels (two PNGs, channel mapping 0 1 2 3 -1 -1) and a stacked
   grayscale camera (4 PNGs, mapping 0 0 0 1 1 1 2 2 2 3 3 3); each the best of --repeats
   alternating runs, the results checked equal; neatpar also with zlib's inflate, to show ISA-L's
   share;
2. env.step() plus get_steps() on the camera simulator, 64 agents, 84 x 84 x 3 PNG observations:
   mlagents-envs' own UnityEnvironment (stock stack: protobuf 3.20.3, built in bench/.envs/stock-X.Y;
   and on neatpar's fast stack), neatpar's bridge with mlagents-envs' conversions and with its bulk
   codec; simulator = its own compute per step (from its log), Python side = the rest.
Usage: python bench/bench_visual.py [--repeats R] [--steps N] [--no-stock] [--no-step]
"""
import argparse
import io
import json
import os
import random
import statistics
import subprocess
import sys
import time
import zlib

import numpy as np
from mlagents_envs.base_env import DimensionProperty, ObservationSpec, ObservationType
from mlagents_envs.communicator_objects.agent_info_pb2 import AgentInfoProto
from mlagents_envs.communicator_objects.observation_pb2 import PNG
from mlagents_envs.rpc_utils import _process_maybe_compressed_observation
from PIL import Image

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from stock_env import ROOT, stock_env, stock_python  # noqa: E402

from neatpar.envs.unity import pixels  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
COUNT, SIZE = 256, 84


def picture(rng: np.random.Generator) -> np.ndarray:
    """An 84 x 84 RGB picture like a rendered scene: shaded surfaces, a few objects, sensor noise."""
    y, x = np.mgrid[0:SIZE, 0:SIZE]
    phase = rng.uniform(0, 6, 3)
    image = 120 + 90 * np.sin(x[..., None] / 25 + y[..., None] / 40 + phase)
    for _ in range(6):
        cx, cy, r = rng.integers(0, SIZE, 2).tolist() + [int(rng.integers(4, 16))]
        image[(x - cx) ** 2 + (y - cy) ** 2 < r * r] = rng.integers(0, 256, 3)
    image += rng.normal(0, 3.5, image.shape)
    return np.clip(image, 0, 255).astype(np.uint8)


def png(image: np.ndarray) -> bytes:
    out = io.BytesIO()
    Image.fromarray(image).save(out, format="PNG")
    return out.getvalue()


def agents(rng, pngs_per_observation: int, channels: int, mapping=()) -> tuple[ObservationSpec, list]:
    """COUNT AgentInfoProtos with one visual observation each, as the bulk reader hands them over."""
    spec = ObservationSpec((SIZE, SIZE, channels), (DimensionProperty.TRANSLATIONAL_EQUIVARIANCE,) * 2 +
                           (DimensionProperty.NONE,), ObservationType.DEFAULT, "camera")
    infos = []
    for i in range(COUNT):
        info = AgentInfoProto(id=i)
        observation = info.observations.add()
        observation.shape.extend([SIZE, SIZE, channels])
        observation.compression_type = PNG
        observation.compressed_data = b"".join(png(picture(rng)) for _ in range(pngs_per_observation))
        observation.compressed_channel_mapping.extend(mapping)
        infos.append(info)
    return spec, infos


def best_of(call, repeats: int) -> float:
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        call()
        times.append(time.perf_counter() - start)
    return min(times) * 1e3


def decode_table(repeats: int) -> None:
    rng = np.random.default_rng(1)
    cases = [("RGB camera, 84x84x3", *agents(rng, 1, 3)),
             ("grayscale camera, 84x84x1 (RGB PNG averaged)", *agents(rng, 1, 1)),
             ("grid sensor, 84x84x4 (2 PNGs, mapping 0 1 2 3 -1 -1)", *agents(rng, 2, 4, [0, 1, 2, 3, -1, -1])),
             ("stacked grayscale camera, 84x84x4 (4 PNGs)", *agents(rng, 4, 4, [k // 3 for k in range(12)]))]
    kib = np.mean([len(i.observations[0].compressed_data) for i in cases[0][2]]) / 1024
    print(f"Decoding {COUNT} visual observations (one RGB PNG: {kib:.1f} KiB on average; best of {repeats} "
          f"alternating runs)\n")
    print("| observation | mlagents-envs (Pillow) | neatpar | ratio | neatpar, zlib's inflate | ratio |")
    print("|---|---|---|---|---|---|")
    for name, spec, infos in cases:
        expected = _process_maybe_compressed_observation(0, spec, infos)
        assert pixels.visual_observations(0, spec, infos).tobytes() == expected.tobytes(), name
        runs = {"mlagents": [], "neatpar": [], "zlib": []}
        calls = {"mlagents": lambda: _process_maybe_compressed_observation(0, spec, infos),
                 "neatpar": lambda: pixels.visual_observations(0, spec, infos),
                 "zlib": lambda: _with_zlib(spec, infos)}
        for _ in range(repeats):
            for key, call in calls.items():
                runs[key].append(best_of(call, 1))
        base, fast, plain = (min(runs[k]) for k in ("mlagents", "neatpar", "zlib"))
        print(f"| {name} | {base:.1f} ms | {fast:.1f} ms | {base / fast:.1f}x | {plain:.1f} ms | {base / plain:.1f}x |",
              flush=True)


def _with_zlib(spec, infos) -> None:
    """neatpar's decode with zlib's inflate (ISA-L's share of the time shows against it)."""
    out = np.empty((len(infos),) + tuple(spec.shape), np.float32)
    for row, info in enumerate(infos):
        observation = info.observations[0]
        assert pixels.decode_png(observation.compressed_data, spec.shape, observation.compressed_channel_mapping,
                                 out[row], zlib.decompress) is None


def probe(python: str, env: dict, mode: str, steps: int) -> dict:
    args = [64, steps, random.randint(2000, 6000), mode, "--size", "84"]
    result = subprocess.run([python, os.path.join(HERE, "_visual_step_probe.py"), *map(str, args)],
                            capture_output=True, text=True, env=env, cwd=ROOT, timeout=1800)
    if result.returncode != 0:
        raise RuntimeError(f"_visual_step_probe.py failed:\n{result.stderr[-3000:]}")
    return json.loads(result.stdout.strip().splitlines()[-1])


def step_table(steps: int, repeats: int, stock: bool) -> None:
    fast_env = {k: v for k, v in os.environ.items() if k not in ("NEATPAR_PYTHON", "NEATPAR_BULKWIRE")}
    configurations = [("mlagents-envs UnityEnvironment, neatpar's fast stack (protobuf 6)", sys.executable, fast_env,
                       "plain"),
                      ("neatpar's bridge, mlagents-envs' conversions (Pillow)", sys.executable, fast_env, "mlagents"),
                      ("neatpar's bridge, bulk codec (pixels.py)", sys.executable, fast_env, "bulk")]
    if stock:
        configurations.insert(0, ("mlagents-envs UnityEnvironment, stock stack (protobuf 3.20.3)", stock_python(),
                                  stock_env(), "plain"))
    runs = {name: [] for name, *_ in configurations}
    for _ in range(repeats):
        for name, python, env, mode in configurations:
            runs[name].append(probe(python, env, mode, steps))
    print(f"\nenv.step() + get_steps() on the camera simulator, 64 agents, 84 x 84 x 3 PNG observations (median of "
          f"{steps} steps, then of {repeats} alternating runs)\n")
    print("| configuration | step | simulator | Python side | Python side against the first |")
    print("|---|---|---|---|---|")
    first = None
    for name, *_ in configurations:
        step = statistics.median(r["step_ms"] for r in runs[name])
        sim = statistics.median(r["sim_ms"] for r in runs[name])
        python_side = step - sim
        first = first or python_side
        print(f"| {name} | {step:.1f} ms | {sim:.1f} ms | {python_side:.1f} ms | {first / python_side:.1f}x |",
              flush=True)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--steps", type=int, default=40)
    parser.add_argument("--no-stock", action="store_true", help="leave out the stock stack in table 2")
    parser.add_argument("--no-step", action="store_true", help="only the decode table")
    args = parser.parse_args()
    print(f"load average at start: {os.getloadavg()[0]:.2f}\n")
    decode_table(args.repeats)
    if not args.no_step:
        step_table(args.steps, max(1, args.repeats // 2), not args.no_stock)
    print(f"\nload average at end: {os.getloadavg()[0]:.2f}")


if __name__ == "__main__":
    main()
