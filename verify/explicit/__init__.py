"""The explicit engine: the evaluator, breadth-first exploration, seat rotation, the play graph's
loops and counter drift. Imports the model and the rule language; never Z3."""
