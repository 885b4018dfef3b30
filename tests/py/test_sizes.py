import pytest

from jostle.errors import UsageError
from jostle.sizes import human, parse_bytes, parse_sizes

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


# One byte count is read in Python (a store query needs no build): the same answers as the
# bench's parser, on every form of N and on its edges.
COUNTS = ["0", "4", "65536", "16K", "16k", "4KiB", "4kib", "4kb", "8B", "64M", "1G", "1T",
          " 16K", "1024G", "8iB", "4X", "-4", "", "K", "1.5K", "1024T", "1025G", "16KB2",
          "99999999999999999999999", "1K,2K", "1:4"]


@pytest.mark.parametrize("text", COUNTS)
def test_one_byte_count_as_the_benchs_parser(text):
    try:
        want = parse_sizes(text)
    except UsageError:
        want = None
    if want is not None and len(want) != 1:
        want = None
    try:
        got = [parse_bytes(text)]
    except UsageError as e:
        assert ascii(text) in str(e) and "byte count" in str(e)
        got = None
    assert got == want
