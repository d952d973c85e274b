"""A copy of the ttnn runtime environment in which tt-metal runs on ttnn's mock cluster.

ttnn 0.81.1 opens a "mock" cluster when TT_METAL_MOCK_CLUSTER_DESC_PATH names a tt-umd cluster
descriptor: the whole host stack runs (device open, the real allocators, program compile and
dispatch, program cache) while every driver access is a no-op, so no kernel executes and reads
return zeros. tt-metal still needs its RISC-V compiler, which it looks for under
<TT_METAL_RUNTIME_ROOT>/runtime/sfpi first. The wheel ships no compiler, and the tests must not
write into the installed package, so `build` makes a folder that mirrors the package with symlinks
(tt_metal/, ttnn/, runtime/hw, ...) plus a runtime/sfpi holding the stand-in compiler
(standin_compiler.py), and points TT_METAL_RUNTIME_ROOT at it.
"""

from __future__ import annotations

import json
import os
import struct
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

from ttprefill.device.ttnn_env import package_root

HERE = Path(__file__).resolve().parent
REPO = HERE.parents[2]
DRIVER_TIMEOUT_S = 600  # a driver's whole run on the mock, compiles included
STANDIN = HERE / "standin_compiler.py"
COMPILER = Path("runtime") / "sfpi" / "compiler" / "bin" / "riscv-tt-elf-g++"

# tt-umd cluster descriptors (its YAML format: arch, chips, ethernet_connections, chips_with_mmio,
# harvesting, boards). A board id carries the board type in bits 36..55 (tt-umd's UPI): 0x186 is an
# n150, 0x146 an n300. Each chip has one Tensix row harvested (mask bit 0 = first row), as shipped
# Wormhole boards do, which leaves the 8x8 worker grid plus a dispatch row. The n300's two chips
# are joined by two Ethernet links; only chip 0 is on PCIe.
CLUSTERS = {
    "n150": """\
arch: {0: Wormhole}
chips: {0: [0, 0, 0, 0]}
ethernet_connections: []
chips_with_mmio: [0: 0]
harvesting: {0: {noc_translation: true, harvest_mask: 1}}
boards: [[{board_id: 0x100018600000001}, {board_type: n150}, {chips: [0]}]]
""",
    "n300": """\
arch: {0: Wormhole, 1: Wormhole}
chips: {0: [0, 0, 0, 0], 1: [1, 0, 0, 0]}
ethernet_connections: [
  [{chip: 0, chan: 8}, {chip: 1, chan: 0}],
  [{chip: 0, chan: 9}, {chip: 1, chan: 1}],
]
chips_with_mmio: [0: 0]
harvesting: {0: {noc_translation: true, harvest_mask: 1}, 1: {noc_translation: true, harvest_mask: 2}}
boards: [[{board_id: 0x100014600000002}, {board_type: n300}, {chips: [0, 1]}]]
""",
}
MESH_SHAPES = {"n150": (1, 1), "n300": (1, 2)}


def _elf_section(path: Path, wanted: str) -> bytes:
    """The bytes of one section of a 32-bit little-endian ELF."""
    data = path.read_bytes()
    shoff, = struct.unpack_from("<I", data, 32)
    shentsize, shnum, shstrndx = struct.unpack_from("<HHH", data, 46)
    headers = [struct.unpack_from("<IIIIIIIIII", data, shoff + i * shentsize) for i in range(shnum)]
    names = headers[shstrndx][4]
    for h in headers:
        start = names + h[0]
        if data[start:data.index(b"\0", start)].decode() == wanted:
            return data[h[4]:h[4] + h[5]]
    raise KeyError(f"{path} has no {wanted} section")


def compiler_version(package: Path) -> str:
    """What the SFPI compiler the wheel's firmware was built with answers to --version.

    tt-metal folds that answer into its firmware build key; with the same answer, the key names
    one of the wheel's pre-compiled firmware sets and no firmware is built. GCC records its
    identity in each object's .comment as "GCC: (<package>) <version>".
    """
    firmware = sorted((package / "tt_metal" / "pre-compiled").glob("*/brisc/brisc.elf"))
    if not firmware:
        raise FileNotFoundError(f"no pre-compiled firmware under {package / 'tt_metal' / 'pre-compiled'}")
    comment = _elf_section(firmware[0], ".comment").split(b"\0")[0].decode()
    if not comment.startswith("GCC: "):
        raise ValueError(f"unexpected .comment {comment!r} in {firmware[0]}")
    return "riscv-tt-elf-g++ " + comment[len("GCC: "):]


@dataclass
class MockEnv:
    root: Path  # the mirrored runtime root
    cluster: str
    compile_log: Path
    cache: Path

    @property
    def descriptor(self) -> Path:
        return self.root.parent / f"{self.cluster}.yaml"

    def environ(self) -> dict[str, str]:
        env = dict(os.environ)
        env.update(
            TT_METAL_MOCK_CLUSTER_DESC_PATH=str(self.descriptor),
            TT_METAL_RUNTIME_ROOT=str(self.root),
            TT_METAL_CACHE=str(self.cache),  # a fresh JIT cache, so every kernel is compiled (and logged)
            TT_METAL_LOGGER_LEVEL="error",
            # tt-metal writes its generated/ watcher and fabric files under this (else the working directory)
            TT_METAL_LOGS_PATH=str(self.root.parent / f"logs-{self.cluster}"),
            TTPREFILL_COMPILE_LOG=str(self.compile_log),
        )
        return env

    def compile_commands(self) -> list[list[str]]:
        import json

        if not self.compile_log.exists():
            return []
        return [json.loads(line) for line in self.compile_log.read_text().splitlines() if line]


def build(workdir: Path, cluster: str) -> MockEnv:
    """Lay out the mirrored runtime root, the stand-in compiler and the cluster descriptor in `workdir`."""
    package = package_root()
    root = workdir / "ttnn-runtime"
    root.mkdir(parents=True, exist_ok=True)
    for entry in package.iterdir():
        if entry.name != "runtime":
            link = root / entry.name
            if not link.exists():
                link.symlink_to(entry)
    (root / "runtime").mkdir(exist_ok=True)
    for entry in (package / "runtime").iterdir():
        link = root / "runtime" / entry.name
        if not link.exists():
            link.symlink_to(entry)
    env = MockEnv(root, cluster, workdir / f"compile-{cluster}.jsonl", workdir / f"cache-{cluster}")
    compiler = root / COMPILER
    compiler.parent.mkdir(parents=True, exist_ok=True)
    # One wrapper per environment; the log it writes to is chosen per run through the environment.
    compiler.write_text(
        "#!/bin/sh\n"
        f"TTPREFILL_STANDIN_VERSION='{compiler_version(package)}' "
        f"exec '{sys.executable}' '{STANDIN}' \"$@\"\n"
    )
    compiler.chmod(0o755)
    env.descriptor.write_text(CLUSTERS[cluster])
    return env


def run_driver(work: Path, cluster: str, driver: str, *args: str, descriptor: str | None = None) -> tuple[MockEnv, dict]:
    """The mock of `cluster` ("n150" or "n300") built in `work`, its cluster descriptor replaced by `descriptor`'s
    text when given (the T3000's, mesh_clusters.py), and `driver` (a script in this folder) run in it with the
    repository importable, as `python DRIVER ARGS... REPORT`: the environment and the JSON report the driver wrote.
    A driver that fails is refused with the end of its stderr."""
    env = build(work, cluster)
    if descriptor is not None:
        env.descriptor.write_text(descriptor)
    environ = env.environ()
    environ["PYTHONPATH"] = os.pathsep.join([str(REPO), environ.get("PYTHONPATH", "")])
    out = work / f"{Path(driver).stem}_report.json"
    proc = subprocess.run([sys.executable, str(HERE / driver), *args, str(out)], env=environ, capture_output=True,
                          text=True, timeout=DRIVER_TIMEOUT_S)
    if proc.returncode != 0 or not out.exists():
        raise AssertionError(f"{driver} {' '.join(args)} on the mock {cluster} failed:\n{proc.stderr[-6000:]}")
    return env, json.loads(out.read_text())
