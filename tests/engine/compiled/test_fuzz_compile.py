"""Issue 28, item 7: fuzzing the compile's surfaces. A flag ends as a refusal in one line or
as text no shell reads; an include or `__has_include`, however spelled, never reads outside
the root and gets the same answer whether or not the file outside exists; a cache entry of
any shape is a hit with a well-formed entry or a miss, never an error."""

from __future__ import annotations

import json
import re

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from sectorviz.engine.compiled import includes, ptxcache
from sectorviz.engine.compiled.bounded import shell_safe
from sectorviz.engine.compiled.flags import user_flags
from sectorviz.engine.compiled.includes import IncludePolicy
from sectorviz.model import PatternError
from sectorviz.model.files import pattern_roots

FUZZ = settings(max_examples=150, deadline=None,
                suppress_health_check=[HealthCheck.function_scoped_fixture])
SHELLISH = st.text(alphabet="-DUIstd=c+_AZaz09$`'\",;|&()<>{} \t\n\\/*.~!#%", max_size=24)
OPTION = re.compile(r"-std=c\+\+\d\d|--?use_fast_math|-maxrregcount=\d+")


@FUZZ
@given(flag=st.one_of(SHELLISH, SHELLISH.map(lambda t: "-D" + t), SHELLISH.map(lambda t: "-I" + t),
                      SHELLISH.map(lambda t: "-DX=" + t)))
def test_a_flag_is_refused_in_one_line_or_reaches_no_shell(tmp_path, flag):
    try:
        read = user_flags([flag], tmp_path, pattern_roots(tmp_path))
    except PatternError as err:
        assert "\n" not in str(err)
        return
    assert all(OPTION.fullmatch(o) for o in read.options)
    assert all(shell_safe(d) for d in read.include_dirs)
    assert all("\n" not in line and "\r" not in line for line in read.macros)
    assert read.header.count("\n") == len(read.macros)


DIRECTIVES = st.sampled_from(['#include "{}"', "#include <{}>", '%:include "{}"',
                              '#/**/include "{}"', '#inc\\\nlude "{}"', '??=include "{}"',
                              '#if __has_include("{}")\n#endif', "#if __has_include(<{}>)\n#endif",
                              '#if __has_\\\ninclude("{}")\n#endif',
                              '#pragma GCC dependency "{}"', '#include_next "{}"'])
SEGMENTS = st.sampled_from(["..", ".", "inc", "outside", "secret.h", "h.h", "link", "{out}",
                            "inc/h.h", "../outside/secret.h", "link/secret.h"])


def _tree(base, exists: bool):
    root, outside = base / "root", base / "outside"
    (root / "inc").mkdir(parents=True)
    outside.mkdir()
    (root / "link").symlink_to(outside)
    (root / "inc" / "h.h").write_text("#define H 1\n")
    if exists:
        (outside / "secret.h").write_text("#define SECRET 1\n")
    return root, outside


def _outcome(base, exists: bool, text_of, monkeypatch) -> tuple[str, list[str]]:
    """(the refusal, or "" for none; the files read) of the policy over one layout."""
    root, outside = _tree(base, exists)
    read: list[str] = []
    real_read = includes.read_text
    policy = IncludePolicy(pattern_roots(root), [root / "inc"], [], macro_includes=False)
    with monkeypatch.context() as patch:
        patch.setattr(includes, "read_text",
                      lambda path, *a: read.append(str(path)) or real_read(path, *a))
        try:
            policy.check_source(text_of(outside), root, "kernel.cu")
        except PatternError as err:
            assert "\n" not in str(err) and "SECRET" not in str(err)
            return str(err).replace(str(outside), "OUT").replace(str(base), "BASE"), read
    assert all(pattern_roots(root).allows(p) for p in read)
    return "", [p.replace(str(base), "BASE") for p in read]


@FUZZ
@given(directive=DIRECTIVES, parts=st.lists(SEGMENTS, min_size=1, max_size=4))
def test_no_spelling_reads_outside_or_tells_what_exists(tmp_path_factory, monkeypatch,
                                                        directive, parts):
    name = "/".join(parts).replace("//", "/")

    def text_of(outside):
        return directive.format(name.replace("{out}", str(outside))) + "\n"

    with_file = _outcome(tmp_path_factory.mktemp("with"), True, text_of, monkeypatch)
    without = _outcome(tmp_path_factory.mktemp("without"), False, text_of, monkeypatch)
    assert with_file[0] == without[0]


VALUES = st.recursive(st.one_of(st.none(), st.booleans(), st.integers(), st.text(max_size=8)),
                      lambda inner: st.one_of(st.lists(inner, max_size=3),
                                              st.dictionaries(st.text(max_size=6), inner,
                                                              max_size=3)), max_leaves=6)


@FUZZ
@given(fields=st.dictionaries(st.sampled_from(["ptx", "ptx_sha256", "entry", "name", "params",
                                               "files", "lookups", "host_code_left_out",
                                               "sass"]), VALUES, max_size=9))
def test_a_cache_entry_of_any_shape_is_a_miss_or_well_formed(tmp_path, monkeypatch, fields):
    monkeypatch.setenv("SECTORVIZ_CACHE_DIR", str(tmp_path))
    (tmp_path / "k.json").write_text(json.dumps(fields))
    entry = ptxcache.load("k")
    assert entry is None or ptxcache.ptx_digest(entry["ptx"]) == entry["ptx_sha256"]
