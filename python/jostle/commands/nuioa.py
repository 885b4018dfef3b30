"""`jostle nuioa`: the NUIOA study of Moreaud 2007 (seed 001; its three parts, placement, flows
and load, are studies/nuioa.py's) as a resumable campaign of existing benchmarks, then its
figures and table."""

import argparse

from ..records import benchmarks
from .. import figures
from ..figures import nuioa as nuioa_figures
from ..records.results import load_run
from ..studies import nuioa as study
from . import _common
from ._launches import report_launches
from .topo import describe

ORDER = 22
STUDY = True
PARTS, DEFAULT_SIZES = study.PARTS, study.DEFAULT_SIZES

EXAMPLES = """examples:
  jostle nuioa --quick                            every part, a few minutes on a laptop
  jostle nuioa --hosts n1,n2                      the study between two nodes (where it matters)
  jostle nuioa --hosts n1,n2 --parts flows --sizes 4M,16M
  jostle nuioa --dry-run

Runs are written to OUTPUT-DIR/CAMPAIGN/nuioa-….jsonl, figures to OUTPUT-DIR/CAMPAIGN/figures/.
On a machine with one NUMA node near and far are the same node: only the near cases run."""


def register(sub):
    p = sub.add_parser("nuioa", help="NUIOA study: placement near/far the NIC, flows, memory load",
                       description=__doc__.split("\n\n")[0], epilog=EXAMPLES,
                       formatter_class=argparse.RawDescriptionHelpFormatter)
    g = p.add_argument_group("study")
    g.add_argument("--parts", default=",".join(PARTS), metavar="A,B",
                   help=f"which parts, of {', '.join(PARTS)} (default: all)")
    g.add_argument("--sizes", type=_common.spec_type, default=DEFAULT_SIZES, metavar="SPEC",
                   help=f"message sizes (default {DEFAULT_SIZES}); load uses the largest")
    _common.bench_option(g, "pingpong", "nic")
    g.add_argument("--writers", type=_common.positive_int, metavar="N",
                   help="compute threads writing in the load part (default: the free cores of "
                        "a rank's share, at least 1)")
    _common.bench_option(g, "pingpong", "buffers",
                   choices=[b for b in benchmarks.choices("pingpong", "buffers") if b != "echo"],
                   help="state of the communicating thread's buffers in every run (default "
                        f"{benchmarks.default('pingpong', 'buffers')}; echo has no meaning for "
                        "the flows)")
    g.add_argument("--quick", action="store_true",
                   help="20 repetitions, 0.2 s per point/phase (in all, over the launches)")
    g.add_argument("--ranks", type=_common.ranks_type, default=2, metavar="N", help="ranks (default 2)")
    g.add_argument("--hosts", type=_common.hosts_type, metavar="A,B",
                   help="hosts, one rank each (default: this host only)")
    _common.add_runs_option(g, default=study.LAUNCHES, help=_common.LAUNCHES_HELP)
    _common.add_launch_options(p)
    _common.add_output_options(p, campaign_default="nuioa")
    p.add_argument("--dry-run", action="store_true", help="print the command lines and exit")
    p.set_defaults(func=main)


def draw(camp, outdir) -> list:
    return figures.write(nuioa_figures.build([load_run(camp.output(s)) for s in camp.runs]), outdir)


def main(args):
    _common.check_hosts(args)
    config = _common.launch_config(args)
    runs, notes = study.plan(_common.settings(study.Settings, args), describe(config.bench),
                             config.bench)

    def after(camp, config, progress):
        report_launches(camp, runs, args.runs)
        for p in draw(camp, camp.dir / "figures"):
            print(p)
        return 0
    return _common.run_campaign(args, runs, after, config, notes)
