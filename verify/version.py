"""Endgame's version: in results kept between runs, and `verify --version`."""
__version__ = "0.1.0"
