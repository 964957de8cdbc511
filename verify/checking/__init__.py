"""Checking: properties on explored graphs, Z3 findings as verdicts, traces and their replay, and the
runner that combines the engines. Imports both engines, the model and the rule language."""
