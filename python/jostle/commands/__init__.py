"""The `jostle` subcommands, one module each (a module whose name starts with _ is shared code).

A module defines register(subparsers), which sets `func` on its parser, and may say:
  ORDER     its place in --help (default 50)
  STUDY     True when `jostle submit` takes it (a campaign that reruns as a batch job)
  RUN_STEPS its steps of `jostle run` (commands.run.Step, each placed by its order)
so that a new study is one new module: neither cli.py, run.py nor submit.py names it.
"""

import importlib
import pkgutil


def names() -> list:
    """Every command's name, no module imported."""
    return [m.name for m in pkgutil.iter_modules(__path__) if not m.name.startswith("_")]


def modules(only=None) -> list:
    """Every command module, in the order of --help; ONLY: that one alone, when it is one."""
    known = names()
    mods = [importlib.import_module(f"{__name__}.{n}")
            for n in ([only] if only in known else known)]
    return sorted((m for m in mods if hasattr(m, "register")),
                  key=lambda m: (getattr(m, "ORDER", 50), m.__name__))


def command_name(module) -> str:
    return module.__name__.rsplit(".", 1)[1]


def studies() -> list:
    """The commands `jostle submit` takes."""
    return [command_name(m) for m in modules() if getattr(m, "STUDY", False)]


def run_steps() -> list:
    """The steps the command modules add to `jostle run`, unordered."""
    return [step for m in modules() for step in getattr(m, "RUN_STEPS", ())]
