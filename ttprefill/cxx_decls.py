"""A small reader of C++ function declarations in kernel-API headers and calls in kernels.

Not a C++ parser: it reads the shape of the TT-Metalium kernel headers (free functions, class
members and constructors, templates, default arguments, [[deprecated]]) well enough for the drift
report (ttprefill.drift) to compare the simulator's headers with the pinned ttnn's. Preprocessor
conditionals are mostly not evaluated: every branch is read, so a function declared under any #if
counts as declared. Three exceptions keep that from inventing declarations: a condition on a macro
the caller says is undefined (the other architectures' ARCH_ macros) drops its branch; inside a
parameter list only the first branch of an #if chain is read (the branches are alternative
parameters, not extra ones); and object-like macros are expanded where they stand for a declaration's
head or a parameter's type (`DFB_TEMPLATE_DECL class DataflowBuffer`, `const DFB_CLASS&`).
Anything it cannot read as a declaration it skips.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path

_TOKEN = re.compile(
    r"""(?P<id>[A-Za-z_]\w*)
      | (?P<num>\.?\d[\w.']*)
      | (?P<str>"(?:\\.|[^"\\])*"|'(?:\\.|[^'\\])*')
      | (?P<op>::|->|\.\.\.|<<=|>>=|<<|>>|<=|>=|==|!=|&&|\|\||\+\+|--|[-+*/%&|^!~=<>?:;,.(){}\[\]\#@$])""",
    re.VERBOSE,
)
KEYWORDS = {
    "if", "for", "while", "switch", "return", "sizeof", "alignof", "decltype", "static_assert", "static_cast",
    "reinterpret_cast", "const_cast", "dynamic_cast", "defined", "noexcept", "alignas", "catch", "throw", "new",
    "delete", "case", "do", "else", "typeid", "requires", "co_return", "__attribute__", "__builtin_expect",
    "operator", "template", "typename", "using", "typedef",
}
# Words that can end a type; a parameter ending in one has no name.
TYPE_WORDS = {"int", "char", "short", "long", "unsigned", "signed", "bool", "float", "double", "void", "auto",
              "const", "volatile", "size_t"}
# Declaration specifiers and function-like attribute macros that say nothing about the signature.
SPECIFIERS = {"inline", "static", "constexpr", "consteval", "extern", "virtual", "explicit", "FORCE_INLINE", "ALWI",
              "__always_inline__", "friend", "thread_local", "register", "mutable", "TT_ALWAYS_INLINE",
              "__inline__"}
# Attribute macros inside parameter types (tt_l1_ptr marks L1 pointers for the RISC-V compiler).
TYPE_NOISE = {"tt_l1_ptr", "tt_reg_ptr", "__restrict__", "__restrict", "struct", "class", "typename"}


@dataclass(frozen=True)
class Token:
    text: str
    line: int
    kind: str


@dataclass
class Param:
    type: str
    name: str | None
    default: str | None

    def __str__(self) -> str:
        out = self.type + (f" {self.name}" if self.name else "")
        return out + (f" = {self.default}" if self.default is not None else "")


@dataclass
class TemplateParam:
    kind: str  # "typename", or the normalised type of a non-type parameter
    name: str | None
    default: str | None
    variadic: bool = False

    def __str__(self) -> str:
        out = self.kind + ("..." if self.variadic else "") + (f" {self.name}" if self.name else "")
        return out + (f" = {self.default}" if self.default is not None else "")


@dataclass
class FunctionDecl:
    name: str
    owner: str  # enclosing class for members and constructors, "" for free functions
    namespace: str
    template: list[TemplateParam] | None
    params: list[Param]
    variadic: bool
    deprecated: str | None
    path: str
    line: int
    access: str = "public"  # of a class member: public | protected | private

    @property
    def key(self) -> str:
        return f"{self.owner}::{self.name}" if self.owner else self.name

    def template_kinds(self) -> tuple[str, ...]:
        return tuple(("..." if t.variadic else "") + t.kind for t in (self.template or []))

    def param_types(self) -> tuple[str, ...]:
        """Parameter types with template type parameters renamed by position ($T0, $T1, ...)."""
        rename = {t.name: f"$T{i}" for i, t in enumerate(self.template or []) if t.name}
        out = []
        for p in self.params:
            out.append(re.sub(r"[A-Za-z_]\w*", lambda m: rename.get(m.group(0), m.group(0)), p.type))
        return tuple(out)

    @property
    def min_args(self) -> int:
        return sum(1 for p in self.params if p.default is None)

    @property
    def max_args(self) -> float:
        return float("inf") if self.variadic else len(self.params)

    def signature(self) -> str:
        tmpl = f"template <{', '.join(map(str, self.template))}> " if self.template is not None else ""
        params = ", ".join(map(str, self.params)) + (", ..." if self.variadic else "")
        return f"{tmpl}{self.key}({params})"


@dataclass
class ClassInfo:
    path: str
    namespace: str
    is_template: bool


@dataclass
class HeaderIndex:
    """Every function, class and macro declared in a tree of headers."""

    root: Path
    functions: dict[str, list[FunctionDecl]] = field(default_factory=dict)
    classes: dict[str, str] = field(default_factory=dict)  # class name -> path declaring it
    class_info: dict[str, ClassInfo] = field(default_factory=dict)
    macros: dict[str, str] = field(default_factory=dict)  # macro name -> path defining it
    # Object-like macro name -> replacement text (the first definition read in a live branch).
    macro_defs: dict[str, str] = field(default_factory=dict)
    methods: dict[str, list[FunctionDecl]] = field(default_factory=dict)  # member name -> decls in any class

    def add(self, decl: FunctionDecl) -> None:
        self.functions.setdefault(decl.key, []).append(decl)
        if decl.owner:
            self.methods.setdefault(decl.name, []).append(decl)


# ----------------------------------------------------------------------------- lexing
def strip_source(text: str, undefined: frozenset[str] = frozenset()) -> tuple[str, list[tuple[str, int]],
                                                                          list[tuple[str, int]]]:
    """Blank out comments and preprocessor lines (keeping line numbers); return the code, the
    macros it #defines and the files it #includes with quotes, each with its line."""
    code, macros, includes, _ = _strip(text, undefined)
    return code, macros, includes


def _condition_value(directive: str, expr: str, undefined: frozenset[str]) -> bool | None:
    """True/False when an #if/#ifdef/#ifndef/#elif condition depends only on macros known to be
    undefined (enough to decide it), None when it cannot be decided here."""
    expr = expr.strip()
    if directive in ("ifdef", "ifndef"):
        name = expr.split()[0] if expr else ""
        if name not in undefined:
            return None
        return directive == "ifndef"
    terms: list[bool | None] = []
    parts = re.split(r"\s*(&&|\|\|)\s*", expr)
    ops = set(parts[1::2])
    if len(ops) > 1:
        return None
    for term in parts[0::2]:
        m = re.fullmatch(r"(!?)\s*defined\s*\(?\s*([A-Za-z_]\w*)\s*\)?", term.strip().strip("()").strip())
        if m and m.group(2) in undefined:
            terms.append(bool(m.group(1)))
        else:
            terms.append(None)
    if ops == {"||"} and True in terms:
        return True
    if ops != {"||"} and False in terms:
        return False
    if all(t is not None for t in terms):
        return any(terms) if ops == {"||"} else all(terms)
    return None


def _strip(text: str, undefined: frozenset[str]) -> tuple[str, list[tuple[str, int]], list[tuple[str, int]],
                                                          dict[str, str]]:
    """strip_source, plus the object-like macro definitions (name -> replacement)."""
    text = text.replace("\\\r\n", "  ").replace("\\\n", "  ")  # join continued lines, keep offsets sane
    out: list[str] = []
    i, n = 0, len(text)
    while i < n:
        c = text[i]
        if c == "/" and text.startswith("//", i):
            j = text.find("\n", i)
            i = n if j < 0 else j
        elif c == "/" and text.startswith("/*", i):
            j = text.find("*/", i + 2)
            j = n if j < 0 else j + 2
            out.append("\n" * text.count("\n", i, j))
            i = j
        elif c in "\"'":
            j = i + 1
            while j < n and text[j] != c:
                j += 2 if text[j] == "\\" else 1
            out.append(text[i:j + 1])
            i = j + 1
        else:
            out.append(c)
            i += 1
    code_lines = "".join(out).split("\n")
    macros, includes = [], []
    defs: dict[str, str] = {}
    # One entry per open #if: [live (this branch is read), decided (a branch was chosen), mode], where
    # mode is "known" (decided by `undefined`), "first" (opened inside a parameter list: only its
    # first branch is read) or "all" (every branch is read).
    conds: list[list] = []
    paren = 0  # open parentheses of the code read so far
    for lineno, line in enumerate(code_lines, 1):
        stripped = line.lstrip()
        live = all(c[0] for c in conds)
        if stripped.startswith("#"):
            m = re.match(r"#\s*(if|ifdef|ifndef|elif|else|endif)\b(.*)", stripped)
            if m:
                directive, expr = m.group(1), m.group(2)
                if directive in ("if", "ifdef", "ifndef"):
                    value = _condition_value(directive, expr, undefined)
                    if value is not None:
                        conds.append([value, value, "known"])
                    else:
                        conds.append([True, True, "first" if paren > 0 else "all"])
                elif conds and directive == "endif":
                    conds.pop()
                elif conds:
                    c = conds[-1]
                    if c[2] == "known":
                        value = True if directive == "else" else _condition_value("if", expr, undefined)
                        c[0] = not c[1] and value is not False
                        c[1] = c[1] or value is True
                    else:
                        c[0] = c[2] == "all"
            elif live:
                m = re.match(r"#\s*define\s+([A-Za-z_]\w*)(\(?)\s*(.*)", stripped)
                if m:
                    macros.append((m.group(1), lineno))
                    if not m.group(2):
                        defs.setdefault(m.group(1), m.group(3).strip())
                m = re.match(r'#\s*include\s*"([^"]+)"', stripped)
                if m:
                    includes.append((m.group(1), lineno))
            code_lines[lineno - 1] = ""
        elif not live:
            code_lines[lineno - 1] = ""
        else:
            bare = re.sub(r'"(?:\\.|[^"\\])*"|\'(?:\\.|[^\'\\])*\'', "", line)
            paren = max(0, paren + bare.count("(") - bare.count(")"))
    return "\n".join(code_lines), macros, includes, defs


def tokenize(code: str) -> list[Token]:
    tokens = []
    line = 1
    pos = 0
    for m in _TOKEN.finditer(code):
        line += code.count("\n", pos, m.start())
        pos = m.start()
        tokens.append(Token(m.group(0), line, m.lastgroup))
    return tokens


def _matching(tokens: list[Token], i: int) -> int:
    """Index of the bracket closing tokens[i] ((, [, { or <), or len(tokens) if unclosed."""
    opener = tokens[i].text
    closer = {"(": ")", "[": "]", "{": "}", "<": ">"}[opener]
    if opener == "<":
        return _matching_angle(tokens, i)
    depth = 0
    for j in range(i, len(tokens)):
        t = tokens[j].text
        if t == opener:
            depth += 1
        elif t == closer:
            depth -= 1
            if depth == 0:
                return j
    return len(tokens)


def _matching_angle(tokens: list[Token], i: int) -> int:
    """The '>' closing a template bracket at tokens[i]; '>>' closes two. Parentheses shelter
    comparison operators, so only brackets at paren depth 0 count."""
    depth = 0
    paren = 0
    for j in range(i, len(tokens)):
        t = tokens[j].text
        if t in "([{":
            paren += 1
        elif t in ")]}":
            paren -= 1
            if paren < 0:
                return j
        elif paren == 0:
            if t == "<":
                depth += 1
            elif t == ">":
                depth -= 1
            elif t == ">>":
                depth -= 2
            elif t in (";", "{"):
                return j
            if depth <= 0:
                return j
    return len(tokens)


def split_top_level(tokens: list[Token], sep: str = ",") -> list[list[Token]]:
    """Split on `sep` outside (), [], {} and template brackets."""
    parts: list[list[Token]] = [[]]
    i = 0
    while i < len(tokens):
        t = tokens[i].text
        if t in "([{":
            j = _matching(tokens, i)
            parts[-1].extend(tokens[i:j + 1])
            i = j + 1
            continue
        if t == "<" and i > 0 and (tokens[i - 1].kind == "id" or tokens[i - 1].text == "template"):
            j = _matching_angle(tokens, i)
            parts[-1].extend(tokens[i:j + 1])
            i = j + 1
            continue
        if t == sep:
            parts.append([])
        else:
            parts[-1].append(tokens[i])
        i += 1
    return [p for p in parts if p] if any(parts) else []


def join_tokens(tokens: list[Token]) -> str:
    out = ""
    prev = None
    for t in tokens:
        if prev is not None and prev.kind in ("id", "num") and t.kind in ("id", "num"):
            out += " "
        out += t.text
        prev = t
    return out


def normalize_type(tokens: list[Token]) -> str:
    """A parameter type in a form two headers can be compared by: no attribute macros, no std::
    on the fixed-width integers, no top-level const on a by-value parameter."""
    toks = [t for t in tokens if t.text not in TYPE_NOISE]
    cleaned: list[Token] = []
    i = 0
    while i < len(toks):
        t = toks[i]
        if t.text == "std" and i + 2 < len(toks) and toks[i + 1].text == "::" and re.fullmatch(
            r"u?int(8|16|32|64)_t|size_t|uintptr_t|intptr_t", toks[i + 2].text
        ):
            i += 2
            continue
        if t.text == "::" and not cleaned:  # leading global qualifier
            i += 1
            continue
        cleaned.append(t)
        i += 1
    by_reference = any(t.text in ("&", "*", "&&") for t in cleaned)
    if not by_reference:
        cleaned = [t for t in cleaned if t.text != "const"]
    text = join_tokens(cleaned)
    return {"unsigned int": "uint32_t", "unsigned": "uint32_t"}.get(text, text)


# ----------------------------------------------------------------------------- declarations
def _strip_attributes(tokens: list[Token]) -> tuple[list[Token], str | None]:
    """Remove [[...]], __attribute__((...)) and alignas(...); return what is left and the
    deprecation message if one of them said deprecated."""
    out: list[Token] = []
    deprecated = None
    i = 0
    while i < len(tokens):
        t = tokens[i].text
        if t == "[" and i + 1 < len(tokens) and tokens[i + 1].text == "[":
            j = _matching(tokens, i)
            inner = join_tokens(tokens[i + 2:j - 1])
            if "deprecated" in inner:
                m = re.search(r'"((?:\\.|[^"\\])*)"', inner)
                deprecated = m.group(1) if m else "deprecated"
            i = j + 1
            continue
        if t in ("__attribute__", "alignas") and i + 1 < len(tokens) and tokens[i + 1].text == "(":
            j = _matching(tokens, i + 1)
            inner = join_tokens(tokens[i + 2:j])
            if "deprecated" in inner:
                m = re.search(r'"((?:\\.|[^"\\])*)"', inner)
                deprecated = m.group(1) if m else "deprecated"
            i = j + 1
            continue
        out.append(tokens[i])
        i += 1
    return out, deprecated


def _template_params(tokens: list[Token]) -> list[TemplateParam]:
    params = []
    for part in split_top_level(tokens):
        default = None
        for k, t in enumerate(part):
            if t.text == "=":
                default = join_tokens(part[k + 1:])
                part = part[:k]
                break
        variadic = any(t.text == "..." for t in part)
        part = [t for t in part if t.text != "..."]
        name = part[-1].text if len(part) > 1 and part[-1].kind == "id" and part[-1].text not in TYPE_WORDS else None
        head = part[:-1] if name else part
        if head and head[0].text in ("typename", "class") and len(head) == 1:
            kind = "typename"
        elif head and head[0].text == "template":
            kind = join_tokens(head)
        else:
            kind = normalize_type(head)
        params.append(TemplateParam(kind, name, default, variadic))
    return params


def _expand(tokens: list[Token], defs: dict[str, str], depth: int = 8) -> list[Token]:
    """Replace object-like macros by their replacement tokens (nested ones too, a few levels deep)."""
    out: list[Token] = []
    for t in tokens:
        if t.kind == "id" and t.text in defs and depth > 0:
            out.extend(_expand([Token(r.text, t.line, r.kind) for r in tokenize(defs[t.text])], defs, depth - 1))
        else:
            out.append(t)
    return out


def _function_params(tokens: list[Token], defs: dict[str, str] | None = None) -> tuple[list[Param], bool]:
    params: list[Param] = []
    variadic = False
    parts = split_top_level(tokens)
    if len(parts) == 1 and [t.text for t in parts[0]] == ["void"]:
        return [], False
    for part in parts:
        if [t.text for t in part] == ["..."]:
            variadic = True
            continue
        default = None
        for k, t in enumerate(part):
            if t.text == "=":
                default = join_tokens(part[k + 1:])
                part = part[:k]
                break
        if defs:  # a type spelled through a macro (const DFB_CLASS&) compares by what it stands for
            part = _expand(part, defs)
        part, _ = _strip_attributes(part)
        if part and part[-1].text == "]":  # array parameter: name[...]
            k = max(i for i, t in enumerate(part) if t.text == "[")
            suffix = join_tokens(part[k:])
            part = part[:k]
        else:
            suffix = ""
        name = None
        # `const uint32_t` is an unnamed parameter: what precedes a name must hold more than qualifiers.
        has_type = any(t.text not in ("const", "volatile") and t.text not in TYPE_NOISE for t in part[:-1])
        if (len(part) > 1 and part[-1].kind == "id" and part[-1].text not in TYPE_WORDS and part[-2].text != "::"
                and has_type):
            name = part[-1].text
            part = part[:-1]
        ptype = normalize_type(part) + ("*" if suffix else "")  # an array parameter is a pointer
        params.append(Param(ptype, name, default))
    return params, variadic


def _find_call_paren(stmt: list[Token]) -> int | None:
    """Index of the '(' that opens a function's parameter list in a declaration statement."""
    i = 0
    while i < len(stmt):
        t = stmt[i]
        if t.text == "(":
            return i
        if t.text == "=" or t.text == "{":
            return None
        if t.text == "<" and i > 0 and stmt[i - 1].kind == "id":
            i = _matching_angle(stmt, i) + 1
            continue
        i += 1
    return None


def index_headers(root: Path, patterns: tuple[str, ...] = ("**/*.h",), skip: tuple[str, ...] = (),
                  undefined: frozenset[str] = frozenset(), index: HeaderIndex | None = None,
                  prefix: str = "") -> HeaderIndex:
    """Index the headers under `root` matching `patterns`, except paths containing any of `skip`;
    `undefined` names macros whose #ifdef branches are not read. With `index`, add to it, naming
    each file `prefix` + its path under `root`."""
    index = index if index is not None else HeaderIndex(root)
    paths = sorted({p for pattern in patterns for p in root.glob(pattern) if p.is_file()})
    stripped = []
    # Two passes: a macro is often defined in a header sorted after the one using it.
    for path in paths:
        rel = prefix + path.relative_to(root).as_posix()
        if not any(s in rel for s in skip):
            stripped.append((rel, _register_macros(path, rel, index, undefined)))
    for rel, code in stripped:
        tokens = tokenize(code)
        _read_scope(tokens, 0, len(tokens), rel, index, namespace="", owner="")
    return index


def _register_macros(path: Path, rel: str, index: HeaderIndex, undefined: frozenset[str]) -> str:
    code, macros, _, defs = _strip(path.read_text(errors="replace"), undefined)
    for name, _line in macros:
        index.macros.setdefault(name, rel)
    for name, text in defs.items():
        index.macro_defs.setdefault(name, text)
    return code


def read_declarations(path: Path, rel: str, index: HeaderIndex, undefined: frozenset[str] = frozenset()) -> None:
    tokens = tokenize(_register_macros(path, rel, index, undefined))
    _read_scope(tokens, 0, len(tokens), rel, index, namespace="", owner="")


def _read_scope(tokens: list[Token], start: int, end: int, rel: str, index: HeaderIndex, namespace: str,
                owner: str, access: str = "public") -> None:
    i = start
    while i < end:
        # Collect one statement: up to ';' or '{' outside brackets.
        j = i
        init_list = False  # inside a constructor's member-initializer list, where name{...} is not a body
        while j < end and tokens[j].text not in (";", "}"):
            text = tokens[j].text
            if text in ("(", "["):
                j = _matching(tokens, j) + 1
                if text == "(" and j < end and tokens[j].text == ":":
                    init_list = True
                continue
            if text == "{":
                if init_list and tokens[j - 1].kind == "id":
                    j = _matching(tokens, j) + 1
                    continue
                break
            j += 1
        stmt = tokens[i:j]
        terminator = tokens[j].text if j < end else ";"
        if terminator == "}":  # a stray closer (unbalanced #if branches): skip it
            i = j + 1
            continue
        body_end = _matching(tokens, j) if terminator == "{" else j
        # Drop access specifiers ("public:") and a leading 'template <...>' (remembered).
        while len(stmt) >= 2 and stmt[0].text in ("public", "private", "protected") and stmt[1].text == ":":
            access = stmt[0].text
            stmt = stmt[2:]
        # A declaration head written through a macro (DFB_TEMPLATE_DECL, which is `template <...>` on
        # one architecture and nothing on another): read what the macro stands for.
        expansions = 0
        while (stmt and stmt[0].kind == "id" and stmt[0].text in index.macro_defs and stmt[0].text not in SPECIFIERS
               and expansions < 8):
            head = tokenize(index.macro_defs[stmt[0].text])
            stmt = [Token(r.text, stmt[0].line, r.kind) for r in head] + stmt[1:]
            expansions += 1
        template = None
        while stmt and stmt[0].text == "template" and len(stmt) > 1 and stmt[1].text == "<":
            close = _matching_angle(stmt, 1)
            template = _template_params(stmt[2:close])
            stmt = stmt[close + 1:]
        stmt, deprecated = _strip_attributes(stmt)
        first = stmt[0].text if stmt else ""
        if first == "namespace" and terminator == "{":
            name = "".join(t.text for t in stmt[1:])
            _read_scope(tokens, j + 1, body_end, rel, index, f"{namespace}::{name}" if namespace else name, owner)
        elif first == "extern" and terminator == "{":
            _read_scope(tokens, j + 1, body_end, rel, index, namespace, owner)
        elif first in ("struct", "class", "union") and terminator == "{" and _find_call_paren(stmt) is None:
            name = stmt[1].text if len(stmt) > 1 and stmt[1].kind == "id" else ""
            if name:
                index.classes.setdefault(name, rel)
                info = index.class_info.setdefault(name, ClassInfo(rel, namespace, template is not None))
                info.is_template |= template is not None
            _read_scope(tokens, j + 1, body_end, rel, index, namespace, name or owner,
                        "private" if first == "class" else "public")
        elif first in ("struct", "class") and terminator == ";" and len(stmt) == 2:
            pass  # forward declaration
        elif first in ("using", "typedef", "static_assert", "enum", "friend", "return") or not stmt:
            pass
        else:
            decl = _as_function(stmt, template, deprecated, rel, namespace, owner, index.macro_defs)
            if decl is not None:
                decl.access = access if owner else "public"
                index.add(decl)
        i = body_end + 1
        if terminator == "{":
            # After a body: a class/variable definition ends with ';' (possibly after declarators).
            k = i
            while k < end and tokens[k].text not in (";", "{", "}") and tokens[k].kind == "id":
                k += 1
            if k < end and tokens[k].text == ";" and (first in ("struct", "class", "union", "enum") or "=" in
                                                      [t.text for t in stmt]):
                i = k + 1


def _as_function(stmt: list[Token], template, deprecated, rel, namespace, owner,
                 defs: dict[str, str] | None = None) -> FunctionDecl | None:
    paren = _find_call_paren(stmt)
    if paren is None or paren == 0:
        return None
    name_tok = stmt[paren - 1]
    if name_tok.text == ">":  # explicit specialisation: foo<...>(...)
        return None
    if name_tok.kind != "id" or name_tok.text in KEYWORDS or name_tok.text in SPECIFIERS:
        return None
    if paren >= 2 and stmt[paren - 2].text in ("operator", "~", "."):
        return None
    prefix = [t for t in stmt[:paren - 1] if t.text not in SPECIFIERS]
    qualified_owner = owner
    if len(prefix) >= 2 and prefix[-1].text == "::":  # out-of-class definition Class::method(...)
        return None
    is_constructor = bool(owner) and name_tok.text == owner
    if not prefix and not is_constructor:
        # No return type: a macro invocation at file scope, or a deduction guide (Name(...) -> Name<...>).
        close = _matching(stmt, paren)
        if close + 1 < len(stmt) and stmt[close + 1].text == "->":
            return FunctionDecl(name_tok.text, name_tok.text, namespace, template,
                                *_function_params(stmt[paren + 1:close], defs), deprecated, rel, name_tok.line)
        return None
    close = _matching(stmt, paren)
    params, variadic = _function_params(stmt[paren + 1:close], defs)
    return FunctionDecl(name_tok.text, qualified_owner, namespace, template, params, variadic, deprecated, rel,
                        name_tok.line)


# ----------------------------------------------------------------------------- calls in kernels
@dataclass
class Call:
    name: str
    member: bool  # obj.name(...) or obj->name(...)
    args: int
    template_args: int | None
    line: int


def find_calls(code: str) -> list[Call]:
    """Calls in a kernel body: name(...), name<...>(...), obj.name(...). Declarations of
    functions in the file are reported too; the caller filters what the file defines itself."""
    tokens = tokenize(code)
    calls = []
    for i, t in enumerate(tokens):
        if t.kind != "id" or t.text in KEYWORDS or t.text in TYPE_WORDS:
            continue
        prev = tokens[i - 1].text if i else ""
        if prev == "::":
            continue  # qualified (std::min, tt::CBIndex::...): not a kernel-API call
        k = i + 1
        template_args = None
        if k < len(tokens) and tokens[k].text == "<":
            close = _matching_angle(tokens, k)
            if close + 1 < len(tokens) and tokens[close + 1].text == "(":
                template_args = len(split_top_level(tokens[k + 1:close]))
                k = close + 1
            else:
                continue
        if k >= len(tokens) or tokens[k].text != "(":
            continue
        close = _matching(tokens, k)
        args = len(split_top_level(tokens[k + 1:close]))
        calls.append(Call(t.text, prev in (".", "->"), args, template_args, t.line))
    return calls


# ----------------------------------------------------------------------------- constants
_CONSTEXPR = re.compile(r"\bconstexpr\s+(?:static\s+)?(?:const\s+)?[\w:]+\s+(\w+)\s*=\s*([^;{}]+);")
_CB_INDEX = re.compile(r"\btt::CBIndex::c_(\d+)\b")
_INT_SUFFIX = re.compile(r"\b(0[xX][0-9a-fA-F]+|\d+)[uUlL]+\b")
_NUMBER = re.compile(r"\b(?:0[xX][0-9a-fA-F]+|\d+\.\d*(?:[eE][-+]?\d+)?|\d+(?:[eE][-+]?\d+)?)")
_EXPR_TOKENS = re.compile(r"\s*(?:[A-Za-z_]\w*|0[xX][0-9a-fA-F]+|\d+\.\d*(?:[eE][-+]?\d+)?|\d+(?:[eE][-+]?\d+)?|<<|[-+*/()])")


def constexpr_values(path: Path) -> dict[str, int | float]:
    """The `constexpr NAME = expression;` constants of a C++ file whose expressions are arithmetic on
    numbers, tt::CBIndex values and constants defined before them (comments and preprocessor lines
    ignored, every scope read). Expressions this cannot evaluate (calls, casts) are left out."""
    code, _, _ = strip_source(Path(path).read_text())
    values: dict[str, int | float] = {}
    for name, expr in _CONSTEXPR.findall(code):
        expr = _INT_SUFFIX.sub(r"\1", _CB_INDEX.sub(r"\1", expr)).strip()
        if "".join(_EXPR_TOKENS.findall(expr)).replace(" ", "") != expr.replace(" ", ""):
            continue
        words = re.findall(r"[A-Za-z_]\w*", _NUMBER.sub(" ", expr))
        if any(w not in values for w in words):
            continue
        if "." not in expr:
            expr = expr.replace("/", "//")
        try:
            values[name] = eval(expr, {"__builtins__": {}}, dict(values))  # tokens checked above: arithmetic only
        except (ArithmeticError, SyntaxError, TypeError):
            continue
    return values
