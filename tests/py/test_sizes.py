import pytest

from jostle.errors import UsageError
from jostle.sizes import human, parse_sizes

pytestmark = pytest.mark.unit


@pytest.fixture(autouse=True)
def _the_parser_is_the_benchs(built):
    """The parser is jostle-bench's (one parser for C and Python): these tests need it built."""
    built()


def test_single_list_and_suffixes():
    assert parse_sizes("0,4,1K,2M,1G") == [0, 4, 1024, 2 << 20, 1 << 30]
    assert parse_sizes("4KiB,4kb,8B") == [4096, 4096, 8]


def test_power_of_two_range_doubles_from_lo_as_the_c_parser():
    assert parse_sizes("0:16") == [0, 1, 2, 4, 8, 16]
    assert parse_sizes("1K:8K") == [1024, 2048, 4096, 8192]
    assert parse_sizes("3:24") == [3, 6, 12, 24]


def test_linear_range():
    assert parse_sizes("1:1024:1") == list(range(1, 1025))
    assert parse_sizes("16:20K:16")[-1] == 20480
    seed = parse_sizes("0:1K:1,1040:20K:16,32K:1G")
    assert len(seed) == len(set(seed)) == 1025 + len(range(1040, 20481, 16)) + 16


@pytest.mark.parametrize("spec,named", [
    ("-4", "-4"), ("abc", "abc"), ("4X", "4X"), ("8:4", "empty"), ("1:8:0", "step"),
    ("1:2:3:4", "1:2:3:4"), ("", "empty"), ("2T", "too large"), ("0:100000000:1", "100000")])
def test_bad_specs_name_the_value(spec, named):
    with pytest.raises(UsageError) as e:
        parse_sizes(spec)
    assert named in str(e.value)


def test_human():
    assert [human(n) for n in (0, 1000, 1024, 1536, 1 << 20, 1 << 30)] == ["0", "1000", "1K", "1536", "1M", "1G"]
