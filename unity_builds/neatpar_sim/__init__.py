"""Headless stand-ins for Unity players: the game side of the ML-Agents protocol, in Python.

`python -m neatpar_sim TASK --mlagents-port P [...]` is what the launchers in unity_builds/ run
(this folder, unity_builds/, put first on sys.path: the package is not installed, and is no part
of neatpar's wheel; it runs on the environment's numpy and mlagents-envs, with neatpar's fast wire);
the real, unmodified mlagents_envs.environment.UnityEnvironment launches and drives them as it
does a Unity player. The protocol is in player.py, ML-Agents' Academy / Agent / DecisionRequester
semantics in academy.py, the task interface and option checks in spec.py, the tasks in tasks.py
(ball, teams) and probe.py (returns known in closed form), the side channels in side_channels.py.
"""
