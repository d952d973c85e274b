"""Facts read straight from tt-metal's kernel sources in the wheel, for checking the program builders
against the kernels rather than against themselves."""

from __future__ import annotations

import re

from ttprefill.ops.upstream import kernel_path


def _condition(directive: str, defines: set[str]) -> bool:
    """The value of an #if/#elif line that tests only defined(...) with and/or/not (&&, ||, !)."""
    expr = re.sub(r"//.*", "", directive).split(None, 1)[1]
    expr = re.sub(r"defined\s*\(?\s*(\w+)\s*\)?", lambda m: f" {m.group(1) in defines} ", expr)
    expr = expr.replace("||", " or ").replace("&&", " and ").replace("!", " not ")
    return bool(eval(expr, {}))  # only True/False/and/or/not remain


def source(relative: str, defines: set[str] = frozenset()) -> str:
    """The kernel text with the #ifdef/#ifndef/#if/#elif defined(...) blocks that `defines` turn off removed."""
    out, stack = [], []  # stack of (this branch active, some branch taken)
    for line in kernel_path(relative).read_text().splitlines():
        d = line.strip()
        if d.startswith(("#ifdef", "#ifndef", "#if ")):
            parent = all(a for a, _ in stack)
            if d.startswith("#ifdef"):
                cond = d.split()[1] in defines
            elif d.startswith("#ifndef"):
                cond = d.split()[1] not in defines
            else:
                cond = _condition(d, defines)
            stack.append((parent and cond, cond))
            continue
        if d.startswith("#elif") and stack:
            _, taken = stack.pop()
            parent = all(a for a, _ in stack)
            cond = not taken and _condition(d, defines)
            stack.append((parent and cond, taken or cond))
            continue
        if d.startswith("#else") and stack:
            active, taken = stack.pop()
            parent = all(a for a, _ in stack)
            stack.append((parent and not taken, True))
            continue
        if d.startswith("#endif") and stack:
            stack.pop()
            continue
        if all(a for a, _ in stack):
            out.append(re.sub(r"//.*", "", line))
    return "\n".join(out)


def compile_time_slots(text: str) -> set[int]:
    """Fixed positions read with get_compile_time_arg_val(N)."""
    return {int(n) for n in re.findall(r"get_compile_time_arg_val\((\d+)\)", text)}


def accessor_start(text: str) -> int:
    """Where the first TensorAccessorArgs<N>() sits among the compile-time args."""
    return int(re.search(r"TensorAccessorArgs<(\d+)>", text).group(1))


def accessor_count(text: str) -> int:
    return len(re.findall(r"TensorAccessorArgs<", text))


def offset_block_length(text: str, name: str = "cb_arg_offset") -> int:
    """How many slots follow `name`: 1 + the largest k in get_compile_time_arg_val(name + k)."""
    ks = [int(k) for k in re.findall(rf"get_compile_time_arg_val\({name}\s*\+\s*(\d+)\)", text)]
    return max(ks) + 1


def runtime_slots(text: str) -> set[int]:
    return {int(n) for n in re.findall(r"get_arg_val<uint32_t>\((\d+)\)", text)}


def names(text: str, namespace: str) -> set[str]:
    """Names a Metal 2.0 kernel binds: args::x, dfb::x, tensor::x."""
    return set(re.findall(rf"\b{namespace}::(\w+)", text))
