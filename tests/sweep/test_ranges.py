import pytest

from sectorviz.sweep.ranges import MAX_VALUES, parse_param


@pytest.mark.parametrize("text, expected", [
    ("tile=8,16,32", ("tile", (8, 16, 32))),
    ("pad=0:3", ("pad", (0, 1, 2))),
    ("threads=32:1025:32", ("threads", tuple(range(32, 1025, 32)))),
    ("k=3:0:-1", ("k", (3, 2, 1))),
    (" n = -4 , 4 ", ("n", (-4, 4))),
    ("n=-9223372036854775808,9223372036854775807", ("n", (-2**63, 2**63 - 1))),
])
def test_lists_and_ranges(text, expected):
    assert parse_param(text) == expected


@pytest.mark.parametrize("text, words", [
    ("tile", "is not NAME=LIST"),
    ("1x=2", "is not NAME=LIST"),
    ("tile=8,x", "'x' is not an integer"),
    ("tile=8,,16", "'' is not an integer"),
    ("pad=0:3:0", "the step is 0"),
    ("pad=3:0", "gives no values"),
    ("pad=1:2:3:4", "is not start:stop"),
    ("tile=8,8", "gives a value twice"),
    (f"n=0:{MAX_VALUES + 1}", f"at most {MAX_VALUES:,}"),
    ("n=1.5", "is not an integer"),
    ("n=9223372036854775808", "9223372036854775808 is outside the int64 range"),
    ("n=-9223372036854775809,0", "is outside the int64 range"),
    ("n=0:99999999999999999999", "'n=0:99999999999999999999': 99999999999999999999 is outside"),
])
def test_bad_params_say_why(text, words):
    with pytest.raises(ValueError, match=words.replace("(", r"\(")):
        parse_param(text)
