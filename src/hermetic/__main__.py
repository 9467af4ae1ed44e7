"""The console script (``hermetic``) and ``python -m hermetic``.

For ``hermetic check`` a parse worker is forked before anything else is imported, so libcst's
import in it (0.15 s) overlaps the command's own start-up: a run that parses one file waits
for that worker less (``workers.EarlyWorker``).
"""
import signal
import sys


class _Interrupted(BaseException):
    """Ctrl-C: not a KeyboardInterrupt, which click turns into exit status 1 (findings)."""


def _on_sigint(signum, frame) -> None:
    raise _Interrupted()


def main() -> None:
    # Ctrl-C ends the command with 130, as a shell reports a job a SIGINT ended, and one line;
    # the analysis runs in a thread of its own (``workers.run_deep``) and the main thread, waiting
    # for it, is where Python delivers the signal. Worker processes see their pipes close and end.
    signal.signal(signal.SIGINT, _on_sigint)
    try:
        _main()
    except _Interrupted:
        from .engine.workers import last_words

        last_words("hermetic: interrupted", 130)


def _main() -> None:
    from .engine.workers import roomy

    if sys.argv[1:2] == ["check"]:
        from .engine.workers import start_early

        start_early()
    from .cli import main as run

    roomy(run)


if __name__ == "__main__":  # pragma: no cover
    main()
