"""The symbolic engine: the Z3 encoding and one module per technique (induction, k-induction, BMC,
Spacer, lasso, ranking, seat symmetry), returning raw findings. Imports the explicit engine's rule
instances and drift, the model and the rule language."""
