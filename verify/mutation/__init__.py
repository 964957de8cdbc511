"""Mutation analysis: small wrong edits of the rules, and which checks catch them (`verify mutate`).
Imports the case library (scenarios), checking, the model and the rule language."""
