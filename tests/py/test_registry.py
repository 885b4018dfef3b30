"""The registries (launchers, exporters, checks) refuse a duplicate name and keep an entry's load error
until it is asked for by name (jostle.registry, as ReFrame's backends)."""
import pytest

from jostle.analysis import check
from jostle.errors import JostleError, UsageError
from jostle.export.exporters import EXPORTERS
from jostle.registry import Registry
from jostle.run import launch

pytestmark = pytest.mark.unit


def test_a_name_registered_twice_is_refused_and_the_first_kept():
    reg = Registry("gadget")
    first = reg.register("a")(object())
    with pytest.raises(JostleError, match="gadget 'a' registered twice"):
        reg.add("a", object())
    assert reg["a"] is first


def test_the_real_registries_refuse_a_second_openmpi_or_openmetrics():
    class Again(launch.Launcher):
        name = "openmpi"
    with pytest.raises(JostleError, match="registered twice"):
        launch.register(Again)
    assert type(launch.LAUNCHERS["openmpi"]).__name__ == "OpenMPI"
    with pytest.raises(JostleError, match="registered twice"):
        EXPORTERS.register("openmetrics")(object)


def test_a_check_registered_twice_is_refused_and_a_check_needs_its_fingerprint_metric():
    with pytest.raises(JostleError, match="check 'triad' registered twice"):
        check.register("triad", kernel="copy")
    assert check.CHECKS["triad"].params == {"kernel": "triad", "phase": "compute"}
    with pytest.raises(JostleError, match="no fingerprint metric"):
        check.register("triads")
    assert "triads" not in check.CHECKS
    # what the rest reads is derived from the one registry, in its order
    assert list(check.CHECKS) == [*check.MEASURED, check.NIC]
    assert check.CHECKS[check.NIC].metric is None
    assert all(check.METRICS[n].name == n for n in check.MEASURED)


def test_a_load_error_is_told_when_asked_for_and_spares_the_others():
    reg = Registry("exporter")
    reg.add("junit", error="No module named 'junit_xml'")
    reg.add("httpjson", "ok")
    assert reg["httpjson"] == "ok" and reg.names() == ["httpjson", "junit"]
    with pytest.raises(JostleError, match="exporter 'junit' could not be loaded: No module"):
        reg["junit"]
    with pytest.raises(UsageError, match="unknown exporter 'xml': expected one of httpjson, junit"):
        reg["xml"]


def test_launchers_and_exporters_are_found_by_name():
    assert {"openmpi", "mpich", "srun", "smpirun", "generic", "custom"} <= set(launch.LAUNCHERS.names())
    assert launch.LAUNCHERS["smpirun"].simulated and not launch.LAUNCHERS["openmpi"].simulated
    assert EXPORTERS.names() == ["openmetrics", "httpjson"]
