"""Commands a test runs through click's ``CliRunner().invoke(cli, args)`` (issue 25, calls
through a library; issue 24, branches on the values a test passes through a CLI runner),
fixture flow-cli.

The model (``analyse/clickmodel.py``) parses the test's argument list as click does and calls
the group's and the subcommand's callbacks with what they get: options with and without values,
``--x/--no-x``, short options, ``--name=value``, ``-qq``, ``multiple``, ``nargs=-1``, ``--``,
defaults (a module constant), ``--name={value}`` built by the test, ``ctx.exit()`` of a
``pass_context`` callback, ``--help`` / ``--version``, a missing or unknown command, a
subcommand registered with ``add_command``, options a project decorator adds, a parametrize
list of words (each value its own command line), a list with a starred loop variable (one
command line per list it can be), options kept in a NamedTuple copied with ``_replace``, the runner's and the invocation's ``env=``, and a
command that raises (the runner keeps the exception: the test goes on). An option's ``envvar=``
is read by click when the line lacks it: the first variable of the real environment is
reported at the option's declaration, and a variable the test sets (or unsets) gives the value.
"""
from helpers import Expect, Silent, fixture_suite

FIX = "flow-cli"
C = "src/tool/cli.py"


def _ids(*names):
    return [f"tests/test_cli.py::{n}" for n in names]


TY = "src/tool/typercli.py"
TT = "tests/test_typercli.py::"

EXPECTED = [
    # an option declared twice (shared with envvar=, and again on the command without): no crash
    # (rq's trial: an internal error on every worker-pool test), the shared envvar read reported
    Expect("shared-option-envvar", "HT103", "src/tool/sharedcli.py", 'click.option("--url", envvar="TOOL_URL"),',
           tests=["tests/test_sharedcli.py::test_pool_without_options"]),
    # a project subclass of click's CliRunner invokes as click's does (black's trial)
    Expect("runner-subclass", "HT102", "src/tool/subcli.py", 'with open(f"stamp-{name}.txt", "w") as fh:',
           tests=["tests/test_subcli.py::test_stamp_through_the_suite_runner"]),
    # typer's CliRunner().invoke(app, args) runs the command a word names; an application of
    # one command runs it (analyse/typermodel.py; a new user's trial on typer)
    Expect("typer-command-named", "HT103", TY, 'return os.environ.get("TOOL_SYNC_TOKEN")',
           tests=[TT + "test_sync_all"]),
    Expect("typer-single-command", "HT102", TY, 'with open("report.txt", "w") as fh:',
           tests=[TT + "test_report"]),
    # argparse: set_defaults(func=purge) then args.func(args) calls the handlers the parser names
    # (which one the line picks is not read: medium); audit, which no subcommand names, is not
    Expect("argparse-handler", "HT102", "src/tool/argcli.py", 'shutil.rmtree("/srv/tool/argcache")',
           tests=["tests/test_argcli.py::test_argparse_purge"], origin="literal"),
    # a word built from "--config=" and a computed value is that option (not any option): only the
    # test that passes --code reads the variable
    # click's Context.exit() raises (catalogue [raises]): the test whose options it refuses stops there
    Expect("context-exit", "HT103", C, 'return os.environ.get("TOOL_LINT_RULES")', tests=_ids("test_lint_ranges")),
    Expect("computed-option-value", "HT103", C, 'os.environ.get("TOOL_FMT_STDIN")', tests=_ids("test_fmt_code")),
    # the group's callback runs before every subcommand, also one whose --help stops it; not for
    # --version, no command, an unknown command, or a test that passes --profile / -p
    Expect("group-callback", "HT103", C, 'os.environ.get("TOOL_PROFILE")', tests=_ids(
        "test_export_default", "test_export_help", "test_export_short_option", "test_export_to_tmp",
        "test_fail_then_cleanup", "test_init_forced_here", "test_stats", "test_sync_dry", "test_sync_dry_with_token",
        "test_sync_unknown_option", "test_sync_with_runner_env", "test_tag_after_double_dash", "test_tag_in_tmp",
        "test_purge_not_confirmed", "test_purge_with_an_option_the_model_does_not_know", "test_wipe_not_really",
        "test_wipe_really", "test_publish", "test_publish_dry_in_two_shapes", "test_tune",
        "test_tune_to_a_level_the_callback_refuses", "test_quit_then_cleanup", "test_where",
        "test_sync_with_env_by_position", "test_warm", "test_warm_given", "test_warm_from_env",
        "test_warm_from_the_second_variable", "test_warm_env_unset", "test_warm_at_a_folder_given_in_two_lists",
        "test_load_without_plugins", "test_load_with_a_plugin", "test_load_with_an_optional_word", "test_stamp",
        "test_deploy", "test_deploy_with_the_variable_removed", "test_deploy_to_tmp", "test_pick_one",
        "test_fmt_with_a_computed_config", "test_fmt_code", "test_lint_refused", "test_lint_ranges",
        "test_pick_filtered", "test_audit_without_a_target", "test_rooted", "test_status")),
    # --force on a working-directory-relative literal; not --no-force's default, not a tmp_path
    Expect("flag-given", "HT102", C, "shutil.rmtree(target)", tests=_ids("test_init_forced_here"), origin="literal"),
    # the option's default is a module constant; --out / -o with a tmp_path file controls it
    Expect("option-default", "HT102", C, 'Path(out_file).write_text("report")', tests=_ids("test_export_default"),
           origin="module-constant"),
    Expect("short-flag", "HT103", C, 'os.environ.get("TOOL_EXPORT_DEBUG")', tests=_ids("test_export_default")),
    # env= of the invocation (by keyword or position) or of the runner sets the variable; an unknown option leaves
    # --dry-run undecided
    # (a test that may reach it only on a way its values do not decide is listed too, and counted
    # in the message: test_sync_unknown_option, an option the model does not know leaves both ways open)
    Expect("env-not-given", "HT103", C, 'os.environ.get("TOOL_TOKEN")',
           tests=_ids("test_sync_dry") + _ids("test_sync_unknown_option")),
    Expect("flag-not-given", "HT102", C, 'Path("/var/lib/tool/sync.stamp")',
           tests=_ids("test_sync_with_runner_env") + _ids("test_sync_unknown_option"), origin="literal"),
    # the command raises, the runner keeps it: the test's next line runs
    Expect("runner-catches", "HT102", C, 'os.remove("tool.lock")',
           tests=_ids("test_fail_then_cleanup", "test_quit_then_cleanup", "test_fail_guard_then_cleanup"),
           origin="literal"),
    # default= a function: click calls it
    Expect("callable-default", "HT103", C, 'return os.environ.get("TOOL_HOME", "/var/lib/tool")',
           tests=_ids("test_where")),
    Expect("callable-default-value", "HT102", C, "Path(home).exists()", tests=_ids("test_where"), origin="environment"),
    Expect("add-command", "HT104", C, "    time.time()", tests=_ids("test_stats")),
    # envvar=: click reads the variable when the line lacks the option (not when it is given, or the
    # runner or monkeypatch sets it); the first real one read is reported at the declaration, and the
    # value is then the variable's or the default. With both unset (or empty), the default
    Expect("envvar-read", "HT103", C, 'envvar=["TOOL_CACHE_DIR", "TOOL_CACHE"]', tests=_ids("test_warm")),
    # a multiple option not given is (): a loop over it never runs; a word that is None stops
    # click's parser (only the row without it runs)
    Expect("loop-over-given-values", "HT103", C, 'os.environ.get("TOOL_PLUGIN_PATH")',
           tests=_ids("test_load_with_a_plugin")),
    # a required option whose variable the test removes: click stops ("Missing option"); set to a
    # tmp_path: controlled; the real environment's: a read, and a write where it points
    Expect("required-envvar-read", "HT103", C, 'envvar="TOOL_TARGET")', tests=_ids("test_deploy")),
    Expect("required-envvar-value", "HT102", C, 'Path(target or "/srv/tool/deploy").write_text("deployed")',
           tests=_ids("test_deploy"), origin="environment"),
    # nargs=-1 values the test wrote are exactly those (the loop returns); a spliced comprehension
    # may stand for none (the fallback may run)
    Expect("spliced-words-may-be-none", "HT102", C, 'Path("/var/tmp/tool-pick.txt")', tests=_ids("test_pick_filtered"),
           origin="literal"),
    # click processes the parameters in order: an earlier one's callback runs before a required one
    # no variable gives stops it; a default function is called when the variable is not set
    Expect("callback-before-a-missing-option", "HT102", C, 'Path("/var/log/tool-audit.log").touch()',
           tests=_ids("test_audit_without_a_target"), origin="literal"),
    Expect("default-function-behind-envvar", "HT103", C, 'return os.environ.get("TOOL_ROOT_FALLBACK", "/srv/tool")',
           tests=_ids("test_rooted")),
    Expect("envvar-with-a-default-function", "HT103", C, 'envvar="TOOL_ROOT"', tests=_ids("test_rooted")),
    # a parameter click does not hand to the command (expose_value=False) still has its variable read
    Expect("envvar-of-an-unexposed-option", "HT103", C, 'envvar="TOOL_DEBUG_LOG"', tests=_ids("test_status")),
    # a None given as an option's value is that value (only where click looks for an option does it stop)
    Expect("none-as-an-option-value", "HT102", C, 'Path("/var/tmp/tool-stamp.txt")', tests=_ids("test_stamp"),
           origin="literal"),
    # ... and a line joined from two lists (`["warm"] + [...]`) is read word by word
    Expect("envvar-unset-default", "HT102", C, "Path(cache_dir).mkdir(exist_ok=True)",
           tests=_ids("test_warm", "test_warm_env_unset", "test_warm_at_a_folder_given_in_two_lists")),
    # nargs=-1 after --, multiple given as --tag=x
    Expect("nargs-after-double-dash", "HT102", C, "Path(p).touch()", tests=_ids("test_tag_after_double_dash"),
           origin="literal"),
    Expect("unknown-option", "HT102", C, 'shutil.rmtree("/srv/tool/cache")',
           tests=_ids("test_purge_with_an_option_the_model_does_not_know"), origin="literal"),
    # options a project decorator adds (its body calls click.option), also through a factory
    Expect("decorator-adds-option", "HT102", C, 'shutil.rmtree("/srv/tool/wipe")', tests=_ids("test_wipe_really"),
           origin="literal"),
    Expect("decorator-factory-adds-option", "HT103", C, 'os.environ.get("TOOL_TRACE_FILE")',
           tests=_ids("test_wipe_really")),
    # a group of a custom class resolves a known name; a prefix is not followed
    Expect("custom-group-class", "HT103", C, 'os.environ.get("TOOL_ROTATE_KEY")', tests=_ids("test_rotate")),
    # options gathered in a NamedTuple (**options) and copied by _replace keep their values; a
    # starred list of a loop's two known lists gives two command lines, not their words mixed
    Expect("namedtuple-replace", "HT102", C, "shutil.rmtree(PUBLISH_CACHE)", tests=_ids("test_publish"),
           origin="module-constant"),
    # a subcommand has its group's help_option_names (a constant dict(...)): "-h" stops it
    Expect("inherited-help-names", "HT103", C, 'os.environ.get("TOOL_DRAIN_QUEUE")', tests=_ids("test_drain")),
    # a parameter's callback= runs first: one that raises for the value stops click (usage error)
    Expect("parameter-callback", "HT103", C, 'os.environ.get("TOOL_TUNE_PROFILE")', tests=_ids("test_tune")),
    Expect("multiple-given", "HT103", C, 'os.environ.get("TOOL_TAG_SERVER")', tests=_ids("test_tag_after_double_dash")),
]

SILENT = [
    Silent("typer-help", TY, "return time.time() - days * 86400", "prune --help: typer prints the help"),
    Silent("command-raises", C, 'raise RuntimeError("always")', "a raise is no I/O"),
]

findings, test_reported, test_silent, test_nothing_else = fixture_suite(FIX, EXPECTED, SILENT)


def test_an_unknown_option_leaves_the_way_undecided(findings):
    # "--frobnicate" is no option of purge: --yes may or may not be given (medium confidence);
    # without it, nothing reaches the rmtree
    import helpers

    (hit,) = helpers.at(findings, C, helpers.line_of(FIX, C, 'shutil.rmtree("/srv/tool/cache")'), "HT102")
    assert hit.tests == _ids("test_purge_with_an_option_the_model_does_not_know")
    assert hit.confidence == "medium"


def test_an_option_declared_twice_is_no_internal_error(tmp_path):
    from helpers import copy_fixture
    from hermetic.api import run_check
    report, _ = run_check(["tests/test_sharedcli.py"], copy_fixture(FIX, tmp_path))
    assert report.errors == []
