"""Unity ML-Agents environments: the bridge to a game, its communicator, the fast wire and the
bulk step codec. Everything here needs mlagents-envs' messages, which need the fast wire."""
from .fastwire import require_armed

require_armed()
