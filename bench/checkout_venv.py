"""The bench scripts that import jostle need numpy, pandas and matplotlib: `python3 bench/X.py`
runs them with the checkout's virtual environment (made by `make venv`) when the interpreter
it was started with lacks them."""
import os
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
VENV_PY = ROOT / ".venv" / "bin" / "python"


def use():
    try:
        import numpy  # noqa: F401
    except ImportError:
        if VENV_PY.exists() and Path(sys.executable).resolve() != VENV_PY.resolve():
            os.execv(str(VENV_PY), [str(VENV_PY), *sys.argv])
        raise
    sys.path.insert(0, str(ROOT / "python"))
