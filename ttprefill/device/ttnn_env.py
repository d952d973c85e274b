"""Where the pinned ttnn package is, and importing it quietly.

ttnn has wheels for Python 3.10 and 3.12 only, so it lives in a second environment, .venv-tt
(scripts/setup-tt-env). Two things need it:
- the card backend and the descriptor checks import it (they run inside .venv-tt);
- the drift report only reads its kernel headers, so it also runs from the main .venv and finds the
  headers on disk without importing ttnn.
"""

from __future__ import annotations

import importlib.util
import os
import sys
from pathlib import Path

from loguru import logger

PINNED_TTNN_VERSION = "0.81.1"
REPO_ROOT = Path(__file__).resolve().parents[2]
TT_VENV = REPO_ROOT / ".venv-tt"
HEADERS_ENV_VAR = "TTPREFILL_TTNN_HEADERS"
# Inside the ttnn package: the kernel-side headers tt-metal's JIT compiles kernels against.
HEADERS_SUBDIR = Path("tt_metal") / "hw" / "inc"


class TTNNNotInstalled(ImportError):
    """The ttnn package is not importable in this interpreter."""


def import_ttnn():
    """Import ttnn, keeping its import-time debug dump of its config out of our logs.

    ttnn logs through loguru (the same global logger we use) and prints its whole config at DEBUG
    level on import; we silence the "ttnn" logger only while importing, so its warnings and errors
    later on still show.
    """
    try:
        logger.disable("ttnn")
        try:
            import ttnn
        finally:
            logger.enable("ttnn")
    except ImportError as e:
        raise TTNNNotInstalled(
            f"ttnn is not installed in this Python ({sys.executable}); the card backend and the descriptor "
            f"checks run in .venv-tt: run scripts/setup-tt-env, then use .venv-tt/bin/python"
        ) from e
    return ttnn


def installed_version() -> str | None:
    """The version of the ttnn distribution visible to this interpreter, without importing it."""
    from importlib import metadata

    try:
        return metadata.version("ttnn")
    except metadata.PackageNotFoundError:
        return None


def _package_dirs_in_venv(venv: Path) -> list[Path]:
    return sorted(venv.glob("lib/python3.*/site-packages/ttnn"))


def headers_root() -> Path:
    """The directory holding the pinned ttnn's kernel headers ("api/dataflow/dataflow_api.h", ...).

    Looked up in order: $TTPREFILL_TTNN_HEADERS; the ttnn package importable here (found without
    importing it); the ttnn package inside the repository's .venv-tt.
    """
    tried: list[str] = []
    explicit = os.environ.get(HEADERS_ENV_VAR)
    if explicit:
        path = Path(explicit)
        if (path / "api").is_dir():
            return path
        raise FileNotFoundError(
            f"{HEADERS_ENV_VAR}={explicit} has no api/ directory; point it at ttnn's tt_metal/hw/inc "
            f"(inside an installed or unpacked ttnn=={PINNED_TTNN_VERSION} wheel)"
        )
    spec = importlib.util.find_spec("ttnn")
    if spec is not None and spec.submodule_search_locations:
        for location in spec.submodule_search_locations:
            candidate = Path(location) / HEADERS_SUBDIR
            tried.append(str(candidate))
            if (candidate / "api").is_dir():
                return candidate
    for package in _package_dirs_in_venv(TT_VENV):
        candidate = package / HEADERS_SUBDIR
        tried.append(str(candidate))
        if (candidate / "api").is_dir():
            return candidate
    raise FileNotFoundError(
        f"cannot find the pinned ttnn=={PINNED_TTNN_VERSION} kernel headers (looked in: {', '.join(tried) or 'nothing'}). "
        f"Run scripts/setup-tt-env to create .venv-tt, or set {HEADERS_ENV_VAR} to ttnn's tt_metal/hw/inc"
    )


def package_root() -> Path:
    """The installed pinned ttnn package folder (site-packages/ttnn), found without importing it.

    Its kernel headers locate it: `headers_root()` is <package>/tt_metal/hw/inc. tt-metal's own kernels
    and the helper headers they include (ttnn/cpp/ttnn/...) are read from here at run time.
    """
    package = headers_root()
    for _ in HEADERS_SUBDIR.parts:
        package = package.parent
    return package


# Where tt-metal's JIT looks for the helper headers that ttnn's kernels include ("ttnn/cpp/ttnn/kernel_lib/...",
# "ttnn/operations/...", "tt-metalium/constants.hpp", "hostdevcommon/common_values.hpp"), relative to the
# package. The kernel API itself (tt_metal/hw/inc and the LLK headers) is deliberately not among them: the
# simulator provides that API at the same paths, and a header it lacks must fail as missing, not resolve to
# the hardware's version.
UPSTREAM_HELPER_INCLUDE_SUBDIRS = (
    Path("."),
    Path("ttnn"),  # "cpp/ttnn/operations/..." (the sdpa kernels' spelling)
    Path("ttnn") / "cpp",
    Path("tt_metal") / "api",
    Path("tt_metal") / "hostdevcommon" / "api",
)


def upstream_helper_include_dirs() -> list[Path]:
    """The include folders above inside the installed package; empty when no pinned ttnn is found."""
    try:
        package = package_root()
    except FileNotFoundError:
        return []
    return [package / sub for sub in UPSTREAM_HELPER_INCLUDE_SUBDIRS if (package / sub).is_dir()]


def headers_version(root: Path) -> str | None:
    """The ttnn version the headers at `root` belong to, read from the wheel's dist-info beside them."""
    package = root
    for _ in HEADERS_SUBDIR.parts:
        package = package.parent
    for info in sorted(package.parent.glob("ttnn-*.dist-info")):
        return info.name[len("ttnn-"):-len(".dist-info")]
    return None
