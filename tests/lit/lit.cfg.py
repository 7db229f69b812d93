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


# Longer names first: `kiln-opt` before `kiln`.
config.substitutions.append(("%python", sys.executable))
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
