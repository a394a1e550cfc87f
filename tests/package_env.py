"""The environment of a test's subprocess: it imports the sltcheck under test, never the checkout by accident.

Under tox (``package = wheel``) that is the installed wheel: no PYTHONPATH is added, and
PYTHONSAFEPATH keeps ``python -c`` from putting the working directory (the checkout) first on
sys.path. In the dev setup (a checkout with an editable install, or PYTHONPATH naming a
worktree) the environment already finds the code; only where nothing is installed is the
checkout added.
"""

from __future__ import annotations

import os
import subprocess
import sys
from importlib import metadata
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
_PROBE = "import sltcheck; print(sltcheck.__file__)"


def _environment() -> dict[str, str]:
    env = {**os.environ, "PYTHONSAFEPATH": "1", "OPENBLAS_NUM_THREADS": "1", "OMP_NUM_THREADS": "1"}
    found = subprocess.run([sys.executable, "-c", _PROBE], env=env, capture_output=True, text=True)
    if found.returncode != 0:  # a bare checkout: nothing installed, nothing on PYTHONPATH
        env["PYTHONPATH"] = os.pathsep.join(p for p in (str(ROOT), env.get("PYTHONPATH")) if p)
    return env


ENV = _environment()


def installed_package() -> Path | None:
    """``sltcheck/__init__.py`` of a regular (non-editable) install, e.g. tox's wheel; None otherwise."""
    try:
        located = Path(str(metadata.distribution("sltcheck").locate_file("sltcheck/__init__.py")))
    except metadata.PackageNotFoundError:
        return None
    return located.resolve() if located.exists() else None


def imported_in_subprocess(cwd: Path = ROOT) -> Path:
    """Where a subprocess started with :data:`ENV` (from ``cwd``) imports sltcheck from."""
    done = subprocess.run([sys.executable, "-c", _PROBE], env=ENV, cwd=cwd, capture_output=True, text=True, check=True)
    return Path(done.stdout.strip()).resolve()
