"""Scenarios: the scenario file format and the simulator that plays one through the model's rules.
Imports checking (traces, explanations), the explicit engine, the model and the rule language."""
