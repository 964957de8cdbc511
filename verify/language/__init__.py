"""The rule language: expression nodes, the lark grammar and its parser, the printer, the walker
base and the type checker. Imports only :mod:`verify.errors`; no solver, no model."""
