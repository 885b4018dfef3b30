"""The layering of src/ and python/jostle (docs/architecture.md), checked on the include and
import graphs by scripts/check-layers.py: on this tree, and on small trees that break each rule
once."""
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.unit

ROOT = Path(__file__).resolve().parents[2]
SCRIPT = ROOT / "scripts" / "check-layers.py"


def check(root):
    r = subprocess.run([sys.executable, str(SCRIPT), str(root)], capture_output=True, text=True)
    return r.returncode, r.stdout.splitlines()


def test_this_tree_keeps_its_layers():
    rc, lines = check(ROOT)
    assert rc == 0, "\n".join(lines)
    # it says what it checked: the folders by floor, lowest first, and nothing up or round
    assert lines[-1] == "0 arrows up, 0 circles, 0 other problems"
    assert any(x.startswith("python/jostle/ by floor: 0 shared, 1 records, 2 run, 3 analysis, "
                            "4 studies, 5 figures export, 6 report, 7 commands, 8 cli")
               for x in lines)


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
    # the Python package: folders ranked, read from the imports (a lazy import inside a function too)
    ({"python/jostle/sizes.py": "def f():\n    from .run.launch import find_bench\n",
      "python/jostle/run/launch.py": ""},
     "python/jostle/sizes.py:2: shared (rank 0) imports jostle.run.launch (run, rank 2), which is above it"),
    ({"python/jostle/commands/submit.py": "from ..cli import build_parser\n"},
     "commands (rank 7) imports jostle.cli (cli, rank 8), which is above it"),
    ({"python/jostle/run/simgrid.py": "from ..commands._common import positive_int\n"},
     "run (rank 2) imports jostle.commands._common"),
    ({"python/jostle/analysis/model.py": "from .. import report\n"},
     "analysis (rank 3) imports jostle.report"),
    ({"python/jostle/records/results.py": "from ..analysis import stats\n"},
     "records (rank 1) imports jostle.analysis (analysis, rank 3)"),
    ({"python/jostle/figures/x.py": "import jostle.analysis.advise\nimport jostle.commands\n"},
     "figures (rank 5) imports jostle.commands"),
    ({"python/jostle/export/junit.py": "from ..figures import pingpong\n"},
     "export imports jostle.figures of figures, which stands beside it"),
    ({"python/jostle/gadget.py": ""}, "module 'gadget' has no rank"),
    ({"python/jostle/misc/thing.py": ""}, "module 'misc' has no rank"),
    ({"python/jostle/figures/big.py": "x = 1\n" * 501}, "big.py: 501 lines, more than 500"),
    # a cycle inside one folder, and one through a function's lazy import
    ({"python/jostle/analysis/a.py": "from . import b\n",
      "python/jostle/analysis/b.py": "def f():\n    from .a import g\n"},
     "python/jostle: analysis.a -> analysis.b import each other"),
    ({"python/jostle/run/a.py": "from .b import x\n", "python/jostle/run/b.py": "from .c import y\n",
      "python/jostle/run/c.py": "from . import a\n"},
     "run.a -> run.b -> run.c import each other"),
    # only commands/ knows argparse, and it hands no namespace down
    ({"python/jostle/analysis/scan.py": "import argparse\n"},
     "analysis/scan.py: analysis imports argparse: only commands/ parses arguments"),
    ({"python/jostle/commands/scan.py": "from ..analysis import scan\n"
      "def main(args):\n    return scan.judge(args, 3)\n"},
     "commands/scan.py:3: passes an argparse namespace to scan.judge, below commands/"),
    ({"python/jostle/commands/topo.py": "from ..analysis.topo_links import report\n"
      "def main(parser):\n    ns = parser.parse_args()\n    report(matrix=ns)\n"},
     "commands/topo.py:4: passes an argparse namespace to report, below commands/"),
    # a study stands below the commands, above analysis and run
    ({"python/jostle/studies/nuioa.py": "from ..figures import nuioa\n"},
     "studies (rank 4) imports jostle.figures (figures, rank 5), which is above it"),
    # a command takes no private name of another command, in either spelling
    ({"python/jostle/commands/model.py": "from .contention import _options\n",
      "python/jostle/commands/contention.py": ""},
     "commands/model.py:1: uses contention._options, private to another command"),
    ({"python/jostle/commands/model.py": "from . import contention as cont\n"
      "def f(p):\n    cont._options(p)\n", "python/jostle/commands/contention.py": ""},
     "commands/model.py:3: uses cont._options, private to another command"),
    # analysis never launches: no subprocess, no jostle-bench client, nothing of run/
    ({"python/jostle/analysis/check.py": "from ..run.campaign import RunSpec\n",
      "python/jostle/run/campaign.py": ""},
     "analysis/check.py:1: analysis uses jostle.run.campaign.RunSpec: analysis never launches"),
    ({"python/jostle/analysis/bounds.py": "def f():\n    import subprocess\n"},
     "analysis/bounds.py:2: analysis uses subprocess: analysis never launches"),
    ({"python/jostle/analysis/bounds.py": "from ..binary import ask\n",
      "python/jostle/binary.py": ""},
     "analysis/bounds.py:1: analysis uses jostle.binary.ask: analysis never launches"),
    ({"python/jostle/analysis/bounds.py": "from ..run import bench_query\n",
      "python/jostle/run/bench_query.py": ""},
     "analysis/bounds.py:1: analysis uses jostle.run.bench_query: analysis never launches"),
    # a registry refuses a duplicate name, before anything is imported
    ({"python/jostle/export/a.py": 'EXPORTERS.add("junit", 1)\n',
      "python/jostle/export/b.py": '@EXPORTERS.register("junit")\nclass J:\n    pass\n'},
     "export/b.py:1: EXPORTERS registers 'junit' again (first at python/jostle/export/a.py:1)"),
    ({"python/jostle/run/launch.py": "@register\nclass A:\n    name = 'srun'\n"
      "@register\nclass B:\n    name, executables = 'srun', ('srun',)\n"},
     "run/launch.py:5: register registers 'srun' again"),
])
def test_each_rule_is_enforced(tmp_path, files, expected):
    rc, problems = check(tree(tmp_path, files))
    assert rc == 1
    assert any(expected in p for p in problems), problems
    assert not problems[-1].startswith("0 arrows up, 0 circles, 0 other")


def test_lower_and_same_layer_includes_pass(tmp_path):
    rc, problems = check(tree(tmp_path, {
        "src/bench/b.c": '#include "harness/harness.h"\n#include "jostle/dbcast.h"\n',
        "src/harness/harness.h": '#include "core/json.h"\n#include "topo/topo.h"\n',
        "src/core/json.h": "", "src/topo/topo.h": "",
        "src/comm/dbcast.c": '#include "jostle/dbcast.h"\n', "include/jostle/dbcast.h": "",
        "python/jostle/cli.py": "from . import commands\nfrom .errors import JostleError\n",
        "python/jostle/commands/run.py": "from .. import report\nfrom . import _common\n",
        "python/jostle/figures/pingpong.py": "from . import Figure\nfrom ..records.results import load\n",
        "python/jostle/run/launch.py": "from ..records import benchmarks\nimport json\n",
        "python/jostle/commands/scan.py": "from ..analysis import scan\nfrom . import _common as c\n"
                                        "def main(args):\n    c.check(args)\n"
                                        "    return scan.judge(args.threshold, 3)\n",
    }))
    assert rc == 0, problems

