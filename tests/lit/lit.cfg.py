# -*- Python -*-
# lit configuration of Kiln's FileCheck tests.
#
# Run from CMake (or by hand) as
#   lit -sv --param kiln_bin_dir=<build>/tools <source>/tests/lit
# The directory holding `kiln-opt` (and later the `kiln` CLI) comes from, in order: the
# `kiln_bin_dir` lit parameter, the KILN_BIN_DIR environment variable, `config.kiln_bin_dir`
# set by a lit.site.cfg.py, or <repo>/build/tools as a last resort.
# Output files (%t) go to the `kiln_exec_root` parameter / KILN_LIT_EXEC_ROOT, a site config's
# `config.test_exec_root`, or <kiln_bin_dir>/../tests/lit.

import os
import shutil
import subprocess
import re
import sys

import lit.formats

config.name = "Kiln"
config.test_format = lit.formats.ShTest(execute_external=False)
config.suffixes = [".mlir"]
config.excludes = ["Inputs", "lit.cfg.py", "lit.site.cfg.py"]
config.test_source_root = os.path.dirname(os.path.abspath(__file__))

repo_root = os.path.dirname(os.path.dirname(config.test_source_root))


def first_set(*values):
    for value in values:
        if value:
            return value
    return None


kiln_bin_dir = first_set(
    lit_config.params.get("kiln_bin_dir"),
    os.environ.get("KILN_BIN_DIR"),
    getattr(config, "kiln_bin_dir", None),
    os.path.join(repo_root, "build", "tools"),
)
kiln_bin_dir = os.path.abspath(kiln_bin_dir)
if not os.path.isfile(os.path.join(kiln_bin_dir, "kiln-opt")):
    lit_config.fatal(
        "kiln-opt not found in %r; pass --param kiln_bin_dir=<build>/tools or set KILN_BIN_DIR"
        % kiln_bin_dir
    )
config.kiln_bin_dir = kiln_bin_dir

# A site config may already have set test_exec_root; otherwise keep Output/ out of the sources.
exec_root = first_set(
    lit_config.params.get("kiln_exec_root"), os.environ.get("KILN_LIT_EXEC_ROOT")
)
if exec_root:
    config.test_exec_root = os.path.abspath(exec_root)
elif not getattr(config, "test_exec_root", None):
    config.test_exec_root = os.path.join(os.path.dirname(kiln_bin_dir), "tests", "lit")

llvm_tools_dir = first_set(
    lit_config.params.get("llvm_tools_dir"),
    os.environ.get("KILN_LLVM_TOOLS_DIR"),
    getattr(config, "llvm_tools_dir", None),
    "/usr/lib/llvm-22/bin",
)


def tool(name):
    """A substitution for the tool `name` as a whole word of a RUN line.

    It does not match inside a path, an option or an op name: `kiln` leaves `kiln-opt`,
    `kiln.conv` and `/x/kiln/y` alone, `not` leaves `--not-x` alone.
    """
    return r"(?<![-./\w])" + re.escape(name) + r"(?![-.\w])"


# `%python` is the first Python that has the onnx and numpy packages the tests generate models
# and check .npy files with. lit often runs under the system Python (the `lit` script's #!
# line), while scripts/setup-deps.sh installs them for `python3` on PATH (or $PYTHON). Order:
# the `python` lit parameter, $KILN_PYTHON, $PYTHON, lit's own Python, python3 on PATH.
def _onnx_python(python):
    """The real executable behind `python` (a pyenv shim, say) when it has onnx and numpy."""
    try:
        result = subprocess.run(
            # find_spec, not import: importing onnx takes about a second.
            [python, "-c", "import importlib.util as u, sys; "
             "ok = all(u.find_spec(m) for m in ('onnx', 'numpy')); "
             "print(sys.executable if ok else '')"],
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            universal_newlines=True,
            timeout=60,
        )
    except (OSError, subprocess.SubprocessError):
        return None
    found = result.stdout.strip()
    return found if result.returncode == 0 and found and os.path.isfile(found) else None


def _candidates():
    for value in (
        lit_config.params.get("python"),
        os.environ.get("KILN_PYTHON"),
        os.environ.get("PYTHON"),
        sys.executable,
    ):
        if value:
            yield value
    for name in ("python3", "python"):
        found = shutil.which(name, path=os.environ.get("PATH"))
        if found:
            yield found


_python = next(filter(None, map(_onnx_python, _candidates())), None)
if _python is None:
    lit_config.fatal(
        "no Python with the onnx and numpy packages (run scripts/setup-deps.sh, or pass "
        "--param python=<exe> or set KILN_PYTHON)"
    )

# Longer names first: `kiln-opt` before `kiln`.
config.substitutions.append(("%python", _python))
config.substitutions.append((tool("kiln-opt"), os.path.join(kiln_bin_dir, "kiln-opt")))
config.substitutions.append((tool("kiln"), os.path.join(kiln_bin_dir, "kiln")))
config.substitutions.append((tool("FileCheck"), os.path.join(llvm_tools_dir, "FileCheck")))
config.substitutions.append((tool("not"), os.path.join(llvm_tools_dir, "not")))

config.environment["PATH"] = os.pathsep.join(
    [kiln_bin_dir, llvm_tools_dir, config.environment.get("PATH", os.environ.get("PATH", ""))]
)
# Keep diagnostics free of terminal colors.
config.environment["TERM"] = "dumb"

if os.path.isfile(os.path.join(kiln_bin_dir, "kiln")):
    config.available_features.add("kiln-cli")
