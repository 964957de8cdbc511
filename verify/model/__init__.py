"""The model: TOML files loaded with their positions, the model's value types (vocabulary, rules,
properties, configurations) and the state layout. Imports the rule language and :mod:`verify.errors`."""
