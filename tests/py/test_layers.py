"""The layering of src/ and python/jostle (docs/architecture.md), checked on the include and
import graphs by scripts/check-layers.py: on this tree, and on small trees that break each rule
once."""
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
SCRIPT = ROOT / "scripts" / "check-layers.py"


def check(root):
    r = subprocess.run([sys.executable, str(SCRIPT), str(root)], capture_output=True, text=True)
    return r.returncode, r.stdout.splitlines()


def test_this_tree_keeps_its_layers():
    rc, problems = check(ROOT)
    assert rc == 0, "\n".join(problems)


def tree(tmp_path, files):
    for name, text in files.items():
        f = tmp_path / name
        f.parent.mkdir(parents=True, exist_ok=True)
        f.write_text(text)
    return tmp_path


@pytest.mark.parametrize("files, expected", [
    ({"src/core/a.c": '#include "harness/harness.h"\n', "src/harness/harness.h": ""},
     "layer core includes \"harness/harness.h\" of layer harness, which is above it"),
    ({"src/topo/t.c": '#include "kernels/latency.h"\n', "src/kernels/latency.h": ""},
     "layer topo includes \"kernels/latency.h\" of layer kernels, which is above it"),
    ({"src/kernels/k.c": '#include "comm/p2p.h"\n', "src/comm/p2p.h": ""},
     "which stands beside it"),
    ({"src/comm/p2p.c": '#include "comm/rma.h"\n', "src/comm/p2p.h": "",
      "src/comm/rma.c": '#include "comm/p2p.h"\n', "src/comm/rma.h": ""},
     "src/comm/p2p and src/comm/rma include each other"),
    ({"src/comm/big.c": "int x;\n" * 501}, "src/comm/big.c: 501 lines, more than 500"),
    ({"src/misc/m.c": ""}, "directory 'misc' is not a layer"),
    # the Python package: ranks read from the imports (a lazy import inside a function too)
    ({"python/jostle/sizes.py": "def f():\n    from .launch import find_bench\n",
      "python/jostle/launch.py": ""},
     "python/jostle/sizes.py:2: sizes (rank 0) imports jostle.launch (launch, rank 1), which is above it"),
    ({"python/jostle/commands/submit.py": "from ..cli import build_parser\n"},
     "commands (rank 7) imports jostle.cli (cli, rank 8), which is above it"),
    ({"python/jostle/simgrid.py": "from .commands._common import positive_int\n"},
     "simgrid (rank 2) imports jostle.commands._common"),
    ({"python/jostle/model.py": "from . import report\n"}, "model (rank 4) imports jostle.report"),
    ({"python/jostle/figures/x.py": "import jostle.advise\n"}, "figures (rank 3) imports jostle.advise"),
    ({"python/jostle/gadget.py": ""}, "module 'gadget' has no rank"),
    ({"python/jostle/figures/big.py": "x = 1\n" * 501}, "big.py: 501 lines, more than 500"),
])
def test_each_rule_is_enforced(tmp_path, files, expected):
    rc, problems = check(tree(tmp_path, files))
    assert rc == 1
    assert any(expected in p for p in problems), problems


def test_lower_and_same_layer_includes_pass(tmp_path):
    rc, problems = check(tree(tmp_path, {
        "src/bench/b.c": '#include "harness/harness.h"\n#include "jostle/dbcast.h"\n',
        "src/harness/harness.h": '#include "core/json.h"\n#include "topo/topo.h"\n',
        "src/core/json.h": "", "src/topo/topo.h": "",
        "src/comm/dbcast.c": '#include "jostle/dbcast.h"\n', "include/jostle/dbcast.h": "",
        "python/jostle/cli.py": "from . import commands\nfrom .errors import JostleError\n",
        "python/jostle/commands/run.py": "from .. import report\nfrom . import _common\n",
        "python/jostle/figures/pingpong.py": "from . import Figure\nfrom ..results import load\n",
        "python/jostle/launch.py": "from . import benchmarks\nimport json\n",
    }))
    assert rc == 0, problems

