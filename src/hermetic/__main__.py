"""The console script (``hermetic``) and ``python -m hermetic``.

For ``hermetic check`` a parse worker is forked before anything else is imported, so libcst's
import in it (0.15 s) overlaps the command's own start-up: a run that parses one file waits
for that worker less (``workers.EarlyWorker``).
"""
import sys


def main() -> None:
    from .workers import roomy

    if sys.argv[1:2] == ["check"]:
        from .workers import start_early

        start_early()
    from .cli import main as run

    roomy(run)


if __name__ == "__main__":  # pragma: no cover
    main()
