"""``Requires-Dist`` lines whose markers use PEP 825's variant variables, read and evaluated.

``packaging`` (26.3) and uv 0.13.9 refuse ``variant_label == 'cuda12.8'`` outright, yet real variant
wheels pin their CUDA libraries that way (the torch 2.10 declaration). Here a marker is parsed into
a small tree; ordinary comparisons are handed to ``packaging`` one at a time (so PEP 508 semantics
stay packaging's), the variant ones are evaluated as PEP 825 says:

- ``variant_label``: a string (``""`` for a non-variant wheel), compared with ``==``, ``!=``,
  ``in``, ``not in``;
- ``variant_namespaces``, ``variant_features``, ``variant_properties``: sets, tested with
  ``'nvidia' in variant_namespaces``; whitespace around ``::`` does not matter.

Markers are evaluated for a *target* (:func:`target_environment`), never silently for this
machine: a variable the target does not define (``platform_release``) makes the line an error
naming it. :meth:`Dependency.for_variant` resolves only the variant variables, leaving a marker
installers can read.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from typing import Union

from packaging.markers import InvalidMarker, Marker, UndefinedComparison
from packaging.requirements import InvalidRequirement, Requirement
from packaging.specifiers import SpecifierSet
from packaging.version import Version

from variant_bridge._patterns import Lazy
from variant_bridge._values import value
from variant_bridge.environment import Environment
from variant_bridge.errors import RequirementError, quote
from variant_bridge.mappings import MappingTables, load_tables
from variant_bridge.platform_tags import TargetPython
from variant_bridge.properties import VariantDescription

__all__ = [
    "VARIANT_VARIABLES",
    "Dependency",
    "VariantValues",
    "evaluate_dependencies",
    "parse_dependency",
    "target_environment",
    "unreadable_version",
]

VARIANT_VARIABLES = frozenset(
    {"variant_label", "variant_namespaces", "variant_features", "variant_properties"}
)
_SETS = VARIANT_VARIABLES - {"variant_label"}

_TOKEN_RE = Lazy(
    r"""\s*(?:(?P<paren>[()])|(?P<string>'[^']*'|"[^"]*")|(?P<op>===|==|!=|<=|>=|~=|<|>)
    |(?P<word>[A-Za-z_][A-Za-z0-9_.]*))""",
    re.VERBOSE,
)
_OPS = frozenset({"===", "==", "!=", "<=", ">=", "~=", "<", ">", "in", "not in"})


@value
class VariantValues:
    """What the variant variables are for one wheel (PEP 825)."""

    label: str = ""
    namespaces: frozenset[str] = frozenset()
    features: frozenset[str] = frozenset()
    properties: frozenset[str] = frozenset()

    @classmethod
    def of(cls, description: VariantDescription | None) -> VariantValues:
        """The values of a variant's declared properties; a non-variant wheel has none."""
        if description is None:
            return cls()
        props = description.properties
        return cls(
            description.label,
            frozenset(p.namespace for p in props),
            frozenset(f"{p.namespace} :: {p.feature}" for p in props),
            frozenset(str(p) for p in props),
        )

    def members(self, variable: str) -> frozenset[str]:
        """The set a set variable (``variant_namespaces``...) stands for."""
        if variable == "variant_namespaces":
            return self.namespaces
        return self.features if variable == "variant_features" else self.properties


# -- the tree -------------------------------------------------------------------------------


@value
class _Var:
    name: str


@value
class _Str:
    value: str


@value
class _Compare:
    left: _Var | _Str
    op: str
    right: _Var | _Str

    @property
    def is_variant(self) -> bool:
        return any(isinstance(s, _Var) and s.name in VARIANT_VARIABLES for s in self.sides)

    @property
    def sides(self) -> tuple[_Var | _Str, _Var | _Str]:
        return (self.left, self.right)

    def __str__(self) -> str:
        return f"{_side(self.left)} {self.op} {_side(self.right)}"


@value
class _BoolOp:
    op: str  # "and" | "or"
    items: tuple[_Node, ...]

    def __str__(self) -> str:
        return f" {self.op} ".join(
            f"({item})" if isinstance(item, _BoolOp) else str(item) for item in self.items
        )


_Node = Union[_Compare, _BoolOp]  # noqa: UP007 - a runtime alias, also on Python 3.10


def _side(side: _Var | _Str) -> str:
    if isinstance(side, _Var):
        return side.name
    return f'"{side.value}"' if "'" in side.value else f"'{side.value}'"


class _Parser:
    """PEP 508's marker grammar: ``or`` of ``and`` of comparisons or parenthesised markers."""

    def __init__(self, text: str) -> None:
        self.text = text
        self.tokens = self._tokenize(text)
        self.at = 0

    def _tokenize(self, text: str) -> list[tuple[str, str]]:
        tokens: list[tuple[str, str]] = []
        position = 0
        while position < len(text):
            if text[position:].strip() == "":
                break
            match = _TOKEN_RE.match(text, position)
            if match is None or match.end() == position:
                raise self._error(f"unexpected {quote(text[position:].strip()[:20])}")
            kind = match.lastgroup or ""
            tokens.append((kind, match[kind]))
            position = match.end()
        return tokens

    def _error(self, what: str) -> RequirementError:
        return RequirementError(f"invalid marker {quote(self.text)}: {what}")

    def _peek(self) -> tuple[str, str] | None:
        return self.tokens[self.at] if self.at < len(self.tokens) else None

    def _take(self) -> tuple[str, str]:
        token = self._peek()
        if token is None:
            raise self._error("it ends too early")
        self.at += 1
        return token

    def parse(self) -> _Node:
        node = self._or()
        if self._peek() is not None:
            raise self._error(f"unexpected {quote(self._take()[1])}")
        return node

    def _or(self) -> _Node:
        items = [self._and()]
        while self._peek() == ("word", "or"):
            self.at += 1
            items.append(self._and())
        return items[0] if len(items) == 1 else _BoolOp("or", tuple(items))

    def _and(self) -> _Node:
        items = [self._atom()]
        while self._peek() == ("word", "and"):
            self.at += 1
            items.append(self._atom())
        return items[0] if len(items) == 1 else _BoolOp("and", tuple(items))

    def _atom(self) -> _Node:
        if self._peek() == ("paren", "("):
            self.at += 1
            node = self._or()
            if self._peek() != ("paren", ")"):
                raise self._error("a parenthesis is not closed")
            self.at += 1
            return node
        left = self._operand()
        op = self._operator()
        return _Compare(left, op, self._operand())

    def _operand(self) -> _Var | _Str:
        kind, value = self._take()
        if kind == "string":
            return _Str(value[1:-1])
        if kind == "word" and value not in ("and", "or", "in", "not"):
            return _Var(value)
        raise self._error(f"expected a variable or a quoted string, got {quote(value)}")

    def _operator(self) -> str:
        kind, value = self._take()
        if kind == "op":
            return value
        if (kind, value) == ("word", "in"):
            return "in"
        if (kind, value) == ("word", "not") and self._take() == ("word", "in"):
            return "not in"
        raise self._error(f"expected a comparison operator, got {quote(value)}")


# -- evaluation -----------------------------------------------------------------------------


def _normalized(item: str) -> str:
    """``nvidia::sm_arch`` and ``nvidia :: sm_arch`` are the same set member."""
    return " :: ".join(part.strip() for part in item.split("::"))


def _variant_compare(node: _Compare, values: VariantValues) -> bool:
    left, right = node.left, node.right
    if isinstance(right, _Var) and right.name in _SETS:
        if not isinstance(left, _Str) or node.op not in ("in", "not in"):
            raise RequirementError(
                f"marker {quote(str(node))}: {right.name} is a set, tested as "
                f"'<value>' in {right.name}"
            )
        found = _normalized(left.value) in values.members(right.name)
        return found if node.op == "in" else not found
    if isinstance(left, _Var) and left.name in _SETS:
        raise RequirementError(
            f"marker {quote(str(node))}: {left.name} is a set, tested as '<value>' in {left.name}"
        )
    if node.op not in ("==", "!=", "in", "not in"):
        raise RequirementError(
            f"marker {quote(str(node))}: variant_label compares with ==, !=, in or not in"
        )
    a = values.label if isinstance(left, _Var) else left.value
    b = values.label if isinstance(right, _Var) else right.value
    return {"==": a == b, "!=": a != b, "in": a in b, "not in": a not in b}[node.op]


def _plain_compare(node: _Compare, environment: Mapping[str, str]) -> bool:
    for side in node.sides:
        if isinstance(side, _Var) and side.name.replace(".", "_") not in environment:
            if side.name in ("extra", "extras", "dependency_groups"):
                continue
            raise RequirementError(
                f"marker {quote(str(node))}: {side.name} is not known for the target"
            )
    try:
        return Marker(str(node)).evaluate(dict(environment))
    except (InvalidMarker, UndefinedComparison, ValueError) as e:
        raise RequirementError(f"marker {quote(str(node))}: {e}") from e


def _evaluate(node: _Node, environment: Mapping[str, str], values: VariantValues) -> bool:
    if isinstance(node, _BoolOp):
        results = (_evaluate(item, environment, values) for item in node.items)
        return all(results) if node.op == "and" else any(results)
    if node.is_variant:
        return _variant_compare(node, values)
    return _plain_compare(node, environment)


def _resolve(node: _Node, values: VariantValues) -> _Node | bool:
    """*node* with the variant comparisons evaluated (``True``/``False`` when nothing is left)."""
    if isinstance(node, _Compare):
        return _variant_compare(node, values) if node.is_variant else node
    kept: list[_Node] = []
    for item in node.items:
        resolved = _resolve(item, values)
        if resolved is True or resolved is False:
            if resolved is (node.op == "or"):  # True in an or, False in an and: decided
                return resolved
            continue
        kept.append(resolved)
    if not kept:
        return node.op == "and"
    return kept[0] if len(kept) == 1 else _BoolOp(node.op, tuple(kept))


# -- requirements ---------------------------------------------------------------------------


@value
class Dependency:
    """One ``Requires-Dist`` line: the requirement and its marker, parsed."""

    text: str
    requirement: Requirement
    """Name, extras, specifier or URL; its ``marker`` is always ``None`` (see :attr:`marker`)."""
    marker: _Node | None = None

    @property
    def name(self) -> str:
        return self.requirement.name

    @property
    def uses_variant_markers(self) -> bool:
        return self.marker is not None and _uses_variant(self.marker)

    @property
    def stated(self) -> str:
        """The requirement without its marker, as written (``nvidia-cublas==12.8.4.1``)."""
        return str(self.requirement)

    @property
    def marker_extras(self) -> frozenset[str]:
        """The extras its marker compares ``extra`` with (``extra == 'cuda'``): the line may
        apply when one of them was installed, which an installed distribution does not record."""
        found: set[str] = set()
        nodes: list[_Node] = [self.marker] if self.marker is not None else []
        while nodes:
            node = nodes.pop()
            if isinstance(node, _BoolOp):
                nodes.extend(node.items)
                continue
            sides = node.sides
            if any(isinstance(s, _Var) and s.name == "extra" for s in sides):
                found.update(s.value for s in sides if isinstance(s, _Str))
        return frozenset(found)

    def applies(self, environment: Mapping[str, str], values: VariantValues) -> bool:
        """Whether the line applies to the target *environment* and the variant *values*.

        :raises RequirementError: a comparison cannot be evaluated for the target.
        """
        return self.marker is None or _evaluate(self.marker, environment, values)

    def for_variant(self, values: VariantValues) -> str | None:
        """The line with its variant comparisons decided: ``None`` when it never applies to that
        variant, else a line any installer reads (only ordinary markers left)."""
        if self.marker is None or not self.uses_variant_markers:
            return self.text
        resolved = _resolve(self.marker, values)
        if resolved is False:
            return None
        if resolved is True:
            return self.stated
        return f"{self.stated}; {resolved}"


def _uses_variant(node: _Node) -> bool:
    if isinstance(node, _Compare):
        return node.is_variant
    return any(_uses_variant(item) for item in node.items)


def _split_marker(line: str) -> tuple[str, str | None]:
    """PEP 508: the marker follows the first ``;`` (after whitespace when a URL precedes it)."""
    head, sep, tail = line.partition(";")
    if not sep:
        return line.strip(), None
    if "@" in head and not head.endswith((" ", "\t")):
        at = line.find(" ;")
        if at < 0:
            return line.strip(), None
        head, tail = line[:at], line[at + 2 :]
    return head.strip(), tail.strip()


def unreadable_version(specifier: SpecifierSet) -> str | None:
    """The first version *specifier* names that cannot be read, else ``None``.

    ``packaging`` accepts ``==1.999…`` (5,000 digits) as a specifier and fails only when it
    compares: ``int()`` refuses numbers past 4,300 digits with a ``ValueError``. Every specifier
    read from input (requests, ``Requires-Dist``, ``Requires-Python``) is checked here first.
    """
    for one in specifier:
        if one.operator == "===":  # arbitrary equality compares text
            continue
        try:
            Version(one.version.removesuffix(".*"))
        except ValueError:
            return one.version
    return None


def parse_dependency(line: str) -> Dependency:
    """Parse a ``Requires-Dist`` value, variant markers included.

    :raises RequirementError: naming the line and what is wrong with it.
    """
    head, marker_text = _split_marker(line)
    try:
        requirement = Requirement(head)
    except InvalidRequirement as e:
        reason = str(e).splitlines()[0]
        raise RequirementError(f"invalid requirement {quote(line)}: {reason}") from None
    bad = unreadable_version(requirement.specifier)
    if bad is not None:
        raise RequirementError(
            f"invalid requirement {quote(line)}: {quote(bad)} is not a PEP 440 version"
        )
    marker = _Parser(marker_text).parse() if marker_text else None
    return Dependency(line, requirement, marker)


@value
class EvaluatedDependencies:
    """The lines that apply to one variant on the target, and why others could not be read."""

    applying: tuple[Dependency, ...]
    problems: tuple[str, ...] = ()
    """One line per ``Requires-Dist`` that could not be parsed or evaluated."""


def evaluate_dependencies(
    lines: Iterable[str], environment: Mapping[str, str], values: VariantValues, extra: str = ""
) -> EvaluatedDependencies:
    """The ``Requires-Dist`` *lines* that apply to the variant *values* on the target.

    Lines of an extra apply only when that *extra* is given (``""``: none is requested). A line
    that cannot be parsed or evaluated is left out with its reason; the other lines are still read.
    """
    applying: list[Dependency] = []
    problems: list[str] = []
    context = {**environment, "extra": extra}
    for line in lines:
        try:
            dependency = parse_dependency(line)
            if dependency.applies(context, values):
                applying.append(dependency)
        except RequirementError as e:
            problems.append(str(e))
    return EvaluatedDependencies(tuple(applying), tuple(problems))


def target_environment(
    env: Environment, python: TargetPython, *, tables: MappingTables | None = None
) -> dict[str, str]:
    """PEP 508 marker values of the target: its platform (from the tables) and interpreter.

    Values the target does not determine (``platform_release``, ``platform_version``, a full
    Python version when only ``3.12`` is known) are left out, so a marker using them is an error
    rather than this machine's answer.
    """
    table = (tables or load_tables()).platform
    values: dict[str, str] = {"python_version": ".".join(map(str, python.major_minor))}
    info = table.subdirs.get(env.platform)
    if info is not None:
        values["platform_system"] = info.system
        values["platform_machine"] = info.marker_machine
        operating_system = table.operating_systems.get(info.os)
        if operating_system is not None and operating_system.sys_platform is not None:
            values["sys_platform"] = operating_system.sys_platform
        if operating_system is not None and operating_system.os_name is not None:
            values["os_name"] = operating_system.os_name
    if python.implementation == "cpython":
        values["implementation_name"] = "cpython"
        values["platform_python_implementation"] = "CPython"
    if len(python.version.release) >= 3:
        values["python_full_version"] = str(python.version)
        if python.implementation == "cpython":
            values["implementation_version"] = str(python.version)
    return values


def variant_lines(lines: Sequence[str], values: VariantValues) -> list[str]:
    """*lines* with their variant comparisons decided for one variant (lines that never apply
    dropped); lines that cannot be parsed are kept as written."""
    out: list[str] = []
    for line in lines:
        try:
            resolved = parse_dependency(line).for_variant(values)
        except RequirementError:
            out.append(line)
            continue
        if resolved is not None:
            out.append(resolved)
    return out
