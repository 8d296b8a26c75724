"""Environment adapters: each kind of environment (Unity ML-Agents, Gymnasium) behind the small
interface the episode runner steps."""
