"""Headless stand-ins for Unity players: the game side of the ML-Agents protocol, in Python.

`python -m neatpar.sim TASK --mlagents-port P [...]` is what the launchers in unity_builds/ run;
the real, unmodified mlagents_envs.environment.UnityEnvironment launches and drives them as it
does a Unity player. Tasks are in tasks.py, the protocol in player.py.
"""
