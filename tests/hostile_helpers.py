"""Helpers the last-line-of-defence tests share (tests/test_hostile_defence.py and
tests/ui/test_hostile_app.py): a stand-in that raises, and the one line the user must see."""

from sectorviz.paths import examples_dir

VECTOR_ADD = str(examples_dir() / "vector-add.sectorviz.json")


def raising(err):
    """A function that raises `err` whatever it is called with."""
    def fail(*_args, **_kwargs):
        raise err
    return fail


def assert_internal_error(code, err, name, kind):
    """Exit 2 and exactly 'NAME: internal error: KIND; please report' on stderr."""
    assert code == 2 and "Traceback" not in err
    assert err == f"{name}: internal error: {kind}; please report\n"
