"""Output: text, Markdown, JSON (ITF) and Graphviz DOT writers over result, trace and scenario
objects; they recompute nothing. Imports checking, scenarios and the explicit graph."""
