"""``Program``: the project's summaries linked by qualified name (every function, class and
module), with the catalogue and configuration the interpreter reads.
"""
from __future__ import annotations

from typing import Dict, Optional, Tuple

from ..analyse.decide import platform_facts
from ..analyse.values import V
from ..catalogue.loader import Catalogue


class Program:
    """Linked summaries: every function, class and module by qualified name."""

    def __init__(self, summaries: Dict[str, dict], test_modules: Dict[str, bool], catalogue: Catalogue,
                 config, session_env: Dict[str, V]):
        self.summaries = summaries                # module -> summary
        self.in_test = test_modules               # module -> is test code
        self.catalogue = catalogue
        self.config = config
        self.session_env = session_env
        self.rel_paths: Dict[str, str] = {}   # module -> path relative to the project root
        self.shipped = None   # ``analyse.shipped.Shipped``: what the checkout holds (set by the pipeline)
        self.functions: Dict[str, Tuple[dict, str]] = {}
        self.classes: Dict[str, Tuple[dict, str]] = {}
        self.canonical: Dict[str, str] = {m: s["module"] for m, s in summaries.items()}
        # constants some file may change in place (``summarise.changed``): the others' members are known
        self.changed_constants = frozenset(n for s in summaries.values() for n in s.get("changed", ()))
        for mod, s in summaries.items():
            if s["module"] != mod:
                continue
            for qn, f in s["functions"].items():
                self.functions[qn] = (f, mod)
            for qn, c in s["classes"].items():
                self.classes[qn] = (c, mod)
        # what sys.platform / os.name / platform.system() / sys.version_info read (section 1)
        self.platform = platform_facts(getattr(config, "platform", None))
        self.control_functions = set(getattr(config, "control_functions", []) or [])
        guard = getattr(config, "guard", None)
        self.guard_function = guard.function if guard is not None else None
        self.bootstrap = set(guard.bootstrap) if guard is not None else set()
        self.bootstrap_modules = {b for b in self.bootstrap if b in summaries}
        self.import_closure: Optional[Dict[str, set]] = None   # set by the checker when a guard is configured
        # exception name -> the messages of its raise sites in project code, and (class, message)
        # -> how many places raise it (``analyse.expected``, filled on first use)
        self.raise_sites: Optional[Dict[str, list]] = None
        self.site_counts: Dict[tuple, int] = {}
        self.classes_by_name: Optional[Dict[str, list]] = None
        self.wrapper_values: Dict[str, list] = {}   # fixture -> what it returns, for ``analyse.mpwrap``
