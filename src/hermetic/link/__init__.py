"""Whole-program linking: the per-file summaries joined into one ``Program``."""
