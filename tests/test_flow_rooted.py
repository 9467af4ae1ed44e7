"""Texts that start at the root of the file system (analyse/rooted.py), fixture flow-rooted.

A folder made absolute (``Path(folder).resolve()``, and what is joined after it) has a text
that starts with the separator: it is no key of a dict of other keys and none before a colon,
and a pattern that cannot begin with ``/`` does not match it, so a nested template is never
taken for a repository URL (near miss: an abbreviated URL is cloned). A path joined after an
absolute one is that path: the test's own folder, which it made, is found, and the working
directory is never looked at (near miss: a folder never made). A folder ``mkdtemp()`` or
``tmp_path_factory.mktemp()`` made is a new one of the test's: it is there, and so is what the
test made in it (near misses: a path in it never made, the folder above it, which is pytest's).
``os.dup`` gives a descriptor:
``open`` of it opens no path and leaves what the test made in tmp_path as it was.

An archive's location looked up in a table of abbreviations a user's settings may extend
(``archives.py``): the test's own tmp_path is no key of the built-in ones, so the lookup picks
only the settings' (not known), and a location with no scheme is no request (``requests``
raises ``MissingSchema`` first); near misses: an abbreviation, a URL.
"""
import os

import pytest

from hermetic.analyse.decide import compare
from hermetic.analyse.regexes import regex_result
from hermetic.analyse.expressions import _dict_entry
from hermetic.analyse.literals import sendable
from hermetic.analyse.origins import FD, START_CWD, joined_path
from hermetic.analyse.rooted import partition_front, rooted_tails
from hermetic.analyse.sinks import _is_descriptor
from hermetic.analyse.state import Ctx
from hermetic.analyse.tmptree import answer as tmp_answer, child, fresh_root, is_fresh_root, parent as tmp_parent, part_of, \
    root_atom, str_answer
from hermetic.analyse.values import Origin, V, of
from helpers import Expect, Silent, fixture_suite

FIX = "flow-rooted"
TM = "src/rooted/templates.py"
AN = "src/rooted/anchors.py"
AR = "src/rooted/archives.py"
TR = "tests/test_archives.py::"
TA = "tests/test_anchors.py::"

NEVER_MADE = [TA + "test_factory_folder_parent", TA + "test_factory_subfolder_never_made", TA + "test_folder_never_made"]
EXPECTED = [
    Expect("abbreviation-cloned", "HT106", TM, 'subprocess.run(["git", "clone", url]',
           tests=["tests/test_templates.py::test_abbreviated_repository"]),
    # only where the folder was never made: the made one is found, traced or not
    # not test_factory_folder / test_mkdtemp_folder: a folder mktemp() / mkdtemp() made is there
    # (test_factory_folder_parent reaches the check on a way its values do not decide: listed, counted)
    Expect("cwd-fallback-dir", "HT102", AN, "if anchor.is_dir():",
           tests=NEVER_MADE[1:] + ["tests/test_anchors.py::test_factory_folder_parent"]),
    Expect("cwd-fallback-glob", "HT102", AN, 'return sorted(anchor.glob("settings*"))', tests=NEVER_MADE),
    # not test_archive_in_the_checkout (no scheme) nor test_archive_in_tmp_with_settings (no
    # built-in abbreviation is a path in tmp_path)
    Expect("abbreviated-archive-sent", "HT105", AR, "return requests.get(location, timeout=10).content",
           tests=[TR + "test_abbreviated_archive", TR + "test_archive_by_url"]),
]
SILENT = [
    Silent("descriptor-opens-no-path", AN, 'stream = open(os.dup(2), "w", buffering=1)',
           why="a duplicated descriptor is no path in the checkout or the home folder"),
]

findings, test_reported, test_silent, test_nothing_else = fixture_suite(FIX, EXPECTED, SILENT)

def _lit(x) -> V:
    # not values.lit(), which interns into a module cache (HT303 on our own suite)
    return of(Origin("literal", expr=repr(x), path="tests/test_x.py", line=1, value=x if isinstance(x, str) else repr(x),
                     in_test=True))


RESOLVED = Origin("cwd", expr="resolve('tests/t')", inner=(Origin("literal", expr="'tests/t'", value="tests/t",
                                                                    in_test=True),))
GETCWD = Origin("cwd", expr="getcwd()", value=START_CWD)


@pytest.mark.skipif(os.sep != "/", reason="a rooted text starts with '/' on POSIX")
def test_rooted_texts():
    assert rooted_tails(of(RESOLVED)) == [None]
    assert rooted_tails(of(GETCWD)) == [None]
    assert rooted_tails(of(RESOLVED, is_path=True)) is None   # a path object, not its text
    assert rooted_tails(of(Origin("cwd", expr="Path()"))) is None   # "." is relative
    assert rooted_tails(_lit("a/b")) is None


@pytest.mark.skipif(os.sep != "/", reason="a rooted text starts with '/' on POSIX")
def test_a_rooted_text_is_no_key_and_no_url():
    keys = of(("dict", (("gh", _lit(1)),)))
    assert compare("In", of(RESOLVED), keys) is False
    assert compare("NotIn", of(RESOLVED), keys) is True
    slash_keys = of(("dict", (("/srv/t", _lit(1)),)))
    assert compare("In", of(RESOLVED), slash_keys) is None   # a key of an absolute path may be it
    url = _lit(r"(git|https?)://|\w+@")
    assert regex_result("match", url, of(RESOLVED)) is False
    assert regex_result("match", _lit(r"/srv"), of(RESOLVED)) is None
    assert partition_front(of(RESOLVED), ":")
    assert not partition_front(of(RESOLVED), "/")   # the front of "/a/b" cut at "/" is ""


def test_a_path_joined_after_an_absolute_one_is_that_path():
    tmp = root_atom("tmp_path")
    made = of(Origin("test-value", expr="tmp_path", value=tmp.value + "conf"), is_path=True)
    assert joined_path([of(GETCWD, is_path=True), made]) == made
    rel = _lit("conf")
    assert joined_path([of(GETCWD, is_path=True), rel]).atoms != rel.atoms   # the working directory leads


def test_a_duplicated_descriptor_is_no_path():
    assert _is_descriptor(of(FD))
    assert _is_descriptor(_lit(1))
    assert not _is_descriptor(V(frozenset([FD, next(iter(_lit("a").atoms))]), False))


def test_fresh_folders_are_parts_of_their_own():
    ctx = Ctx()
    first = fresh_root(ctx, "tempfile.mkdtemp", False)
    second = fresh_root(ctx, "tempfile.mkdtemp", False)
    (a,), (b,) = first.atoms, second.atoms
    assert part_of(a) != part_of(b) and is_fresh_root(part_of(a))
    assert tmp_answer(ctx.tmp_tree, "is_dir", [part_of(a)]) is True
    assert tmp_answer(ctx.tmp_tree, "exists", [part_of(a) + "/x"]) is False
    assert part_of(tmp_parent(a)) is None   # the folder above it is not the test's
    assert child(a, [".."]) is None   # nor is a path climbing out of it
    assert str_answer("endswith", [part_of(a)], "0") is None   # its own name is not known
    assert str_answer("endswith", [part_of(a) + "/conf.ini"], ".ini") is True


def test_the_abbreviation_the_tmp_path_named_is_none_of_the_built_in_ones():
    built_in, settings = _lit("https://github.com/{0}"), of(Origin("unknown"))
    table = ("dict", (("gh", built_in), (None, settings)))
    tmp = Origin("test-value", expr="tmp_path", value="tmp archive.zip")
    if os.sep == "/":   # a rooted text only on POSIX
        assert _dict_entry(table, of(tmp)) == settings
        assert _dict_entry(table, of(tmp) | of(Origin("unknown"))) == settings
    assert _dict_entry(table, _lit("gh") | of(Origin("unknown"))) == built_in | settings
    # a key the analysis cannot follow picks no entry it could name: not the built-in one
    assert _dict_entry(("dict", (("gh", built_in),)), of(Origin("unknown"))).atoms == {Origin("unknown")}
    # near miss: in a table of handlers, a key not known may call any of them (issue 25's dispatch)
    handlers = ("dict", (("gevent", of(("func", "m.patch_gevent", None))), ("eventlet", of(("func", "m.patch_eventlet", None)))))
    assert len(_dict_entry(handlers, of(Origin("unknown"))).atoms) == 2
    # a key of the machine's (an environment variable's value) may be any of them
    env = of(Origin("environment", expr="TEMPLATE"))
    assert _dict_entry(table, env) == built_in | settings


def test_a_location_with_no_scheme_is_no_request():
    web = ("http", "https")
    assert sendable(_lit("tests/archives/t.zip"), web) is None
    assert sendable(_lit("/srv/archive.zip"), web) is None
    assert sendable(_lit(" HTTPS://example.org/t.zip"), web) is not None   # requests strips and lowers
    head = of(Origin("literal", expr="'ht'", value="ht", partial=True))   # "ht" + rest: may be http
    assert sendable(head, web) == head
    mixed = _lit("tests/t.zip") | _lit("https://example.org/t.zip") | of(Origin("unknown"))
    assert len(sendable(mixed, web).atoms) == 2   # the URL and the value not known
    assert sendable(_lit("ftp://example.org/t"), web) is None
    assert sendable(_lit("ftp://example.org/t"), ("http", "https", "ftp")) is not None
