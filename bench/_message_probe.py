"""Run inside one environment: times parse, serialize and a pickle round trip (what the stock
communicator's Pipe does) of one 256-agent step message; prints one JSON line."""
import json
import pickle
import statistics
import sys
import time

import numpy as np
from mlagents_envs.communicator_objects.unity_message_pb2 import UnityMessageProto


def message(agents: int) -> UnityMessageProto:
    rng = np.random.default_rng(0)
    m = UnityMessageProto()
    m.header.status = 200
    infos = m.unity_output.rl_output.agentInfos["Ball3D?team=0"].value
    for agent in range(agents):
        info = infos.add()
        info.id, info.reward = agent, 0.1
        obs = info.observations.add()
        obs.shape.append(8)
        obs.float_data.data.extend(rng.normal(size=8).tolist())
        obs.dimension_properties.append(1)
    return m


def median_ms(fn, reps):
    times = []
    for _ in range(reps):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return statistics.median(times) * 1e3


def main(agents: int) -> None:
    m = message(agents)
    data = m.SerializeToString()
    reps = 200
    print(json.dumps({
        "bytes": len(data),
        "parse_ms": median_ms(lambda: UnityMessageProto.FromString(data), reps),
        "serialize_ms": median_ms(m.SerializeToString, reps),
        "pickle_ms": median_ms(lambda: pickle.loads(pickle.dumps(m)), reps),
    }))


if __name__ == "__main__":
    main(int(sys.argv[1]))
