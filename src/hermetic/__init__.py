"""hermetic: checks whether a project's tests are really isolated (static analysis on libcst)."""
__version__ = "0.1.0"
