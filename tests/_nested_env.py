"""A virtual environment, made inside a test, that sees the packages of the interpreter running the test.

``venv.create(..., system_site_packages=True)`` hands a new environment the packages of the *base*
interpreter. That is right only when pytest itself runs system-wide: run from a virtual
environment (the README's ``python3 -m venv v && . v/bin/activate && make test``), the base has
none of turneval's dependencies and the nested environment finds nothing. So the nested
environment here is a bare one whose ``.pth`` file adds the running interpreter's own site
directories with ``site.addsitedir`` (their ``.pth`` files processed, as for system
site-packages), after its own: it sees what this test run sees, and what is installed into it
comes first.
"""
from __future__ import annotations

import json
import site
import subprocess
import sys
import venv
from pathlib import Path


PTH_NAME = "_turneval_tests_running_interpreter.pth"


def running_site_dirs() -> list[str]:
    """The site directories of the running interpreter, in import order, without repeats."""
    candidates = [*site.getsitepackages()]
    if site.ENABLE_USER_SITE:
        candidates.append(site.getusersitepackages())
    # sys.path also holds site directories that a .pth or PYTHONPATH added (Debian's dist-packages)
    candidates += [p for p in sys.path if Path(p).name in ("site-packages", "dist-packages")]
    seen: list[str] = []
    for path in candidates:
        if Path(path).is_dir() and path not in seen:
            seen.append(path)
    return seen


def nested_venv(env_dir: Path, with_pip: bool = True) -> Path:
    """Create a virtual environment at ``env_dir`` that sees the running interpreter's packages.

    Returns its ``python``. Of what ensurepip installs only pip stays: its old setuptools would
    hide the running interpreter's newer one, which torch needs at import.
    """
    venv.create(env_dir, with_pip=with_pip)
    python = env_dir / "bin" / "python"
    if with_pip:
        subprocess.run([str(python), "-m", "pip", "uninstall", "-y", "-q", "setuptools"], capture_output=True, timeout=300)
    where = subprocess.run(
        [str(python), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
        capture_output=True, text=True, timeout=120, check=True,
    )
    dirs = running_site_dirs()
    # one line, executed by site at start-up (a .pth line that starts with "import" runs); no
    # comprehension: site execs the line with separate locals, which a comprehension cannot see
    line = f"import site; list(map(site.addsitedir, {json.dumps(dirs)}))\n"
    (Path(where.stdout.strip()) / PTH_NAME).write_text(line, encoding="utf-8")
    return python
