"""The "before" engine: autograd_lab as it was at a git ref, importable next to today's.

    module = load("HEAD~3")        # autograd_lab_before, from a temporary folder

`git archive REF autograd_lab` writes that commit's package into a temporary folder (it reads the
object store only: the working tree, the index and HEAD of the checkout are left alone), where it
is renamed `autograd_lab_before`. The package imports itself relatively, with a few exceptions
that name it in full: generated kernel sources (`from autograd_lab.compile.extras.kernel_math import
...`) and module lookups (`sys.modules.get("autograd_lab.backend.cuda.array")`). Those are
rewritten to the new name, so that the old package never reaches into today's: a kernel the old
compiler generates calls the old kernel_math. `load` checks that importing it imported nothing of
today's package. The folder is removed when the process exits.
"""

import atexit
import importlib
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

from harness import REPO

PACKAGE = "autograd_lab_before"
ORIGINAL = "autograd_lab"


def export(ref, folder, repo=REPO):
    """Write `ref`'s autograd_lab/ into `folder`/PACKAGE, its full-name references rewritten."""
    archive = subprocess.run(
        ["git", "-C", str(repo), "archive", "--format=tar", ref, ORIGINAL],
        capture_output=True,
        check=False,
    )
    if archive.returncode != 0:
        message = archive.stderr.decode(errors="replace").strip()
        raise RuntimeError(f"git archive {ref} {ORIGINAL} failed: {message}")
    subprocess.run(["tar", "-x", "-C", str(folder)], input=archive.stdout, check=True)
    package = Path(folder) / PACKAGE
    (Path(folder) / ORIGINAL).rename(package)
    rename_references(package)
    return package


def rename_references(package):
    """Point every full-name reference to the package's own modules at the new name.

    Only `autograd_lab.<one of its modules>` and `import autograd_lab` / `from autograd_lab import`
    change: names that merely start the same (`autograd_lab_fused_<key>`) and messages such as
    `pip install 'autograd_lab[lab]'` or a repr's `autograd_lab.Size(...)` stay as they are."""
    modules = sorted(p.stem for p in package.iterdir() if p.suffix == ".py" or p.is_dir())
    submodule = re.compile(rf"\b{ORIGINAL}(?=\.(?:{'|'.join(map(re.escape, modules))})\b)")
    statement = re.compile(rf"(?m)^(\s*(?:from|import)\s+){ORIGINAL}\b")
    for path in package.rglob("*.py"):
        text = path.read_text(encoding="utf-8")
        renamed = statement.sub(rf"\g<1>{PACKAGE}", submodule.sub(PACKAGE, text))
        if renamed != text:
            path.write_text(renamed, encoding="utf-8")


def load(ref, repo=REPO):
    """Export `ref`'s package (see `export`) and import it; the folder goes when Python exits."""
    folder = tempfile.mkdtemp(prefix="autograd_lab_before_")
    atexit.register(shutil.rmtree, folder, ignore_errors=True)
    export(ref, folder, repo)
    sys.path.insert(0, folder)
    today = {name for name in sys.modules if name.split(".")[0] == ORIGINAL}
    module = importlib.import_module(PACKAGE)
    leaked = {name for name in sys.modules if name.split(".")[0] == ORIGINAL} - today
    if leaked:  # a full-name import the rewrite missed: "before" would run today's code
        raise RuntimeError(f"{PACKAGE} imported today's {', '.join(sorted(leaked))}")
    return module
