"""Unity ML-Agents environments: the bridge to a game, its wire and the bulk step decode."""
