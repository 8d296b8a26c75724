"""The settings, at the bottom of the stack (they import nothing of neatpar but its records and
errors): the value readers (readers.py), what `env` names (targets.py), who drives each behavior
(behaviors.py), the network kinds as the settings know them (network_kinds.py), the settings model with
each key declared once (settings_model.py), config files (files.py), and a run's stored settings with
the resume policy (run_settings.py)."""
