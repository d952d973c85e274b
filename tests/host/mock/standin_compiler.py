"""A stand-in for SFPI's riscv-tt-elf-g++, for running tt-metal on ttnn's mock cluster.

tt-metal's JIT calls the RISC-V compiler to build every kernel, then loads the linked ELF (it lays
out its segments and applies its relocations) before dispatch. On the mock nothing executes, so the
code need not be real; the ELF's shape must be. This script:

- appends each command line, as a JSON list, to the file named by $TTPREFILL_COMPILE_LOG, so the
  tests read exactly the flags, defines and include paths tt-metal passed;
- answers the version probe with the string of the SFPI release the pinned wheel was built with
  (read from the .comment of its pre-compiled firmware by the environment builder), which makes
  tt-metal's firmware build key match the firmware the wheel ships, so no firmware is compiled;
- writes what each step promises: an empty object for `-c`, a dependency file for `-MF`, and for
  a link a one-instruction RISC-V ELF whose text sits where the kernel's linker script puts it,
  with the (empty) relocation section tt-metal's loader requires.

It never compiles anything: whether a kernel compiles for the card is checked elsewhere (drift).
"""

from __future__ import annotations

import json
import os
import re
import struct
import sys

VERSION_ENV = "TTPREFILL_STANDIN_VERSION"
LOG_ENV = "TTPREFILL_COMPILE_LOG"

EM_RISCV = 243
RET = 0x00008067  # jalr x0, 0(ra)


def _elf_symbol(path: str, wanted: str) -> int | None:
    """The value of symbol `wanted` in a 32-bit little-endian ELF (the firmware's exported layout)."""
    data = open(path, "rb").read()
    shoff, = struct.unpack_from("<I", data, 32)
    shentsize, shnum = struct.unpack_from("<HH", data, 46)
    sections = [struct.unpack_from("<IIIIIIIIII", data, shoff + i * shentsize) for i in range(shnum)]
    for _name, kind, _flags, _addr, off, size, link, _info, _align, entsize in sections:
        if kind != 2:  # SHT_SYMTAB
            continue
        strtab = sections[link]
        for k in range(size // entsize):
            st_name, st_value = struct.unpack_from("<II", data, off + k * entsize)
            start = strtab[4] + st_name
            if data[start:data.index(b"\0", start)].decode() == wanted:
                return st_value
    return None


def _text_address(args: list[str]) -> int:
    """Where the kernel's linker script places .text: at a literal address, or at a symbol the
    firmware it links against defines (the end of the firmware's text, or its region's start)."""
    script = next((a[2:] for a in args if a.startswith("-T")), None)
    where = re.search(r"^\s*\.text\s+([^:]+?)\s*:", open(script).read(), re.M) if script else None
    if where and re.fullmatch(r"0x[0-9A-Fa-f]+|\d+", where.group(1)):
        return int(where.group(1), 0)
    firmware = next((a.split("=", 1)[1] for a in args if a.startswith("-Wl,--just-symbols=")), None)
    value = _elf_symbol(firmware, where.group(1)) if where and firmware else None
    if value is None:
        raise SystemExit(f"stand-in compiler: cannot tell where .text goes for {args}")
    return value


def _minimal_elf(text_address: int) -> bytes:
    """ELF32 RISC-V executable: one loadable text segment of one `ret`, an empty .rela.text, a symtab."""
    text = struct.pack("<I", RET)
    shstrtab = b"\0.text\0.rela.text\0.symtab\0.strtab\0.shstrtab\0"
    strtab = b"\0_start\0"
    symtab = bytes(16) + struct.pack("<IIIBBH", 1, text_address, 0, 0x12, 0, 1)  # GLOBAL FUNC in .text
    ehsize, phsize, shsize = 52, 32, 40
    text_off = ehsize + phsize
    symtab_off = text_off + len(text)
    strtab_off = symtab_off + len(symtab)
    shstrtab_off = strtab_off + len(strtab)
    shoff = (shstrtab_off + len(shstrtab) + 3) & ~3

    def name(s: str) -> int:
        return shstrtab.index(s.encode() + b"\0")

    sections = [
        (0, 0, 0, 0, 0, 0, 0, 0, 0, 0),
        (name(".text"), 1, 0x6, text_address, text_off, len(text), 0, 0, 4, 0),
        (name(".rela.text"), 4, 0x40, 0, symtab_off, 0, 3, 1, 4, 12),
        (name(".symtab"), 2, 0, 0, symtab_off, len(symtab), 4, 1, 4, 16),
        (name(".strtab"), 3, 0, 0, strtab_off, len(strtab), 0, 0, 1, 0),
        (name(".shstrtab"), 3, 0, 0, shstrtab_off, len(shstrtab), 0, 0, 1, 0),
    ]
    header = b"\x7fELF" + bytes([1, 1, 1, 0]) + bytes(8)
    header += struct.pack("<HHIIIIIHHHHHH", 2, EM_RISCV, 1, text_address, ehsize, shoff, 0,
                          ehsize, phsize, 1, shsize, len(sections), len(sections) - 1)
    phdr = struct.pack("<IIIIIIII", 1, text_off, text_address, text_address, len(text), len(text), 5, 4)
    body = header + phdr + text + symtab + strtab + shstrtab
    body += bytes(shoff - len(body))
    return body + b"".join(struct.pack("<IIIIIIIIII", *s) for s in sections)


def main(args: list[str]) -> int:
    log = os.environ.get(LOG_ENV)
    if log:
        with open(log, "a") as f:
            f.write(json.dumps(args) + "\n")
    if args[:1] == ["--version"]:
        print(os.environ[VERSION_ENV])
        return 0
    out = args[args.index("-o") + 1] if "-o" in args else None
    if "-MF" in args:
        with open(args[args.index("-MF") + 1], "w") as f:
            f.write(f"{out}:\n")
    if out is None:
        return 0
    if out.endswith(".elf"):
        payload = _minimal_elf(_text_address(args))
    else:
        payload = b""
    with open(out, "wb") as f:
        f.write(payload)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
