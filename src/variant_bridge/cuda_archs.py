"""CUDA architecture lists in every spelling maintainers write them, as one set of targets.

A build compiles GPU code for *targets*: real code (SASS) for a compute capability, which runs
on that GPU generation, or virtual code (PTX), which the driver JIT-compiles for newer GPUs.
Three worlds spell the same list differently:

- CMake (``CMAKE_CUDA_ARCHITECTURES``, ``CUDAARCHS``, conda-forge's nvcc activation):
  ``80-real;90`` (a bare number is real *and* virtual, ``-real`` / ``-virtual`` one of them);
- PyTorch (``TORCH_CUDA_ARCH_LIST``): ``8.0;9.0+PTX`` (real code, ``+PTX`` adds the virtual);
- wheel variants (``nvidia :: sm_arch``): ``80_real``, ``90_virtual``; nvcc's ``sm_80`` /
  ``compute_90`` are read too.

Items are separated by ``;``, ``,`` or whitespace; arch-specific suffixes (``90a``, ``100f``)
are kept. :func:`parse_arch_list` reads any of them (one spelling per item, decided per item);
:class:`ArchSet` compares and writes them back. Lists that depend on the compiler (CMake's
``all``, ``all-major``, ``native``) are refused: the targets they stand for are not in the text.

>>> s = parse_arch_list("8.0;9.0+PTX")
>>> str(s), s.cmake()
('80_real 90_real 90_virtual', '80-real;90')
>>> parse_arch_list("80-real;90") == s
True
"""

from __future__ import annotations

import enum
import re
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass

from variant_bridge.errors import InvalidArchList, quote

__all__ = ["ArchKind", "ArchListKey", "ArchLists", "ArchSet", "CudaArch", "parse_arch_list"]


class ArchKind(enum.Enum):
    """Real code (SASS) or virtual code (PTX); the value is the ``sm_arch`` suffix."""

    REAL = "real"
    VIRTUAL = "virtual"


@dataclass(frozen=True, slots=True)
class CudaArch:
    """One compilation target: compute capability ``major.minor`` (+ suffix) and its kind."""

    major: int
    minor: int
    suffix: str = ""
    """``a`` (arch-specific) or ``f`` (family-specific), as in ``90a``; usually empty."""
    kind: ArchKind = ArchKind.REAL

    @property
    def number(self) -> str:
        """``90``, ``120``, ``90a``: the CMake / ``sm_arch`` number."""
        return f"{self.major}{self.minor}{self.suffix}"

    @property
    def capability(self) -> str:
        """``9.0``, ``12.0``, ``9.0a``: the compute capability as PyTorch writes it."""
        return f"{self.major}.{self.minor}{self.suffix}"

    @property
    def key(self) -> tuple[int, int, str, bool]:
        """For ordering: by compute capability, real before virtual."""
        return (self.major, self.minor, self.suffix, self.kind is ArchKind.VIRTUAL)

    def __str__(self) -> str:
        return f"{self.number}_{self.kind.value}"


_NUMBER = r"(?P<major>[1-9][0-9]?)(?P<minor>[0-9])(?P<suffix>[af]?)"
_CMAKE = re.compile(rf"{_NUMBER}(?:-(?P<kind>real|virtual))?")
_SM_ARCH = re.compile(rf"{_NUMBER}_(?P<kind>real|virtual)")
_NVCC = re.compile(rf"(?P<prefix>sm|compute)_{_NUMBER}")
_TORCH = re.compile(
    r"(?P<major>[1-9][0-9]?)\.(?P<minor>[0-9])(?P<suffix>[af]?)(?P<ptx>\+PTX)?", re.IGNORECASE
)
_COMPILER_DEFINED = frozenset({"all", "all-major", "native"})
_SEPARATORS = re.compile(r"[;,\s]+")
_EXPECTED = (
    "expected CMake '80-real;90', PyTorch '8.0;9.0+PTX' or sm_arch '80_real 90_virtual' items"
)


def _targets(major: str, minor: str, suffix: str, kinds: Iterable[ArchKind]) -> list[CudaArch]:
    return [CudaArch(int(major), int(minor), suffix, kind) for kind in kinds]


def _item(item: str) -> list[CudaArch]:
    """The targets one list item names; ``[]`` when it is no spelling this module reads."""
    match = _TORCH.fullmatch(item)
    if match is not None:
        kinds = [ArchKind.REAL, *([ArchKind.VIRTUAL] if match["ptx"] else [])]
        return _targets(match["major"], match["minor"], match["suffix"], kinds)
    match = _SM_ARCH.fullmatch(item) or _CMAKE.fullmatch(item)
    if match is not None:
        kind = match["kind"]
        kinds = [ArchKind(kind)] if kind else [ArchKind.REAL, ArchKind.VIRTUAL]
        return _targets(match["major"], match["minor"], match["suffix"], kinds)
    match = _NVCC.fullmatch(item)
    if match is not None:
        kind = ArchKind.REAL if match["prefix"] == "sm" else ArchKind.VIRTUAL
        return _targets(match["major"], match["minor"], match["suffix"], [kind])
    return []


def parse_arch_list(text: str, *, where: str = "the arch list") -> ArchSet:
    """Read an architecture list in any of the spellings above.

    :param where: names the input in the error (``--arch-list 12.9``, a file and key).
    :raises InvalidArchList: an empty list, an item no spelling reads, or a compiler-defined
        list (``all``, ``native``) whose targets the text does not say.
    """
    items = [i for i in _SEPARATORS.split(text.strip()) if i]
    if not items:
        raise InvalidArchList(f"{where}: empty CUDA architecture list; {_EXPECTED}")
    found: list[CudaArch] = []
    for item in items:
        if item.lower() in _COMPILER_DEFINED:
            raise InvalidArchList(
                f"{where}: {quote(item)} depends on the nvcc version, so the targets are not in "
                "the list; give them explicitly (e.g. '80-real;90-real;120')"
            )
        targets = _item(item)
        if not targets:
            raise InvalidArchList(
                f"{where}: unknown CUDA architecture {quote(item)} in {quote(text)}; {_EXPECTED}"
            )
        found.extend(targets)
    return ArchSet(frozenset(found))


@dataclass(frozen=True, slots=True)
class ArchSet:
    """A set of compilation targets, compared as sets whatever spelling they came from."""

    targets: frozenset[CudaArch] = frozenset()

    @classmethod
    def of(cls, values: Iterable[str], *, where: str = "sm_arch") -> ArchSet:
        """From ``sm_arch`` values (or any spelling, item by item)."""
        return parse_arch_list(" ".join(values), where=where) if values else cls()

    def __iter__(self) -> Iterator[CudaArch]:
        return iter(sorted(self.targets, key=lambda t: t.key))

    def __len__(self) -> int:
        return len(self.targets)

    def __bool__(self) -> bool:
        return bool(self.targets)

    def __sub__(self, other: ArchSet) -> ArchSet:
        return ArchSet(self.targets - other.targets)

    def __or__(self, other: ArchSet) -> ArchSet:
        return ArchSet(self.targets | other.targets)

    @property
    def sm_arch(self) -> tuple[str, ...]:
        """The ``nvidia :: sm_arch`` values, by compute capability, real before virtual."""
        return tuple(str(t) for t in self)

    def cmake(self) -> str:
        """CMake's spelling: ``80-real;90`` (a bare number where both kinds are present)."""
        kinds: dict[tuple[int, int, str], set[ArchKind]] = {}
        for t in self:
            kinds.setdefault((t.major, t.minor, t.suffix), set()).add(t.kind)
        items = []
        for (major, minor, suffix), present in kinds.items():
            number = f"{major}{minor}{suffix}"
            items.append(number if len(present) == 2 else f"{number}-{next(iter(present)).value}")
        return ";".join(items)

    def __str__(self) -> str:
        return " ".join(self.sm_arch)


_CUDA_KEY = re.compile(r"[1-9][0-9]?(?:\.[0-9]{1,2})?")
_PLATFORM = re.compile(r"[a-z0-9]+-[a-z0-9_]+")
_VARIANT_KEY = re.compile(r"(?P<key>[A-Za-z_][A-Za-z0-9_]*)=(?P<value>[^\s=,:]+)")
_EXPECTED_KEY = (
    "expected [PLATFORM,KEY=VALUE:][CUDA=]LIST like '12.9=8.0;9.0+PTX', '13=80-real;90', "
    "'linux-aarch64:12.9=8.7;9.0' or 'arm_variant_type=tegra:12.9=8.7;10.1+PTX'"
)


@dataclass(frozen=True, slots=True)
class ArchListKey:
    """Which conda builds one ``--arch-list`` applies to: a platform (``linux-aarch64``), variant
    keys (``arm_variant_type=tegra``), a CUDA version or major; each part optional."""

    platform: str | None = None
    keys: tuple[tuple[str, str], ...] = ()
    cuda: str = ""
    """``12.9``, ``13`` or ``""`` (any)."""

    def matches(self, cuda: str, platform: str, variant: Mapping[str, str]) -> bool:
        if self.platform is not None and self.platform != platform:
            return False
        if any(variant.get(k) != v for k, v in self.keys):
            return False
        return self.cuda in ("", cuda, cuda.split(".", maxsplit=1)[0])

    @property
    def specificity(self) -> tuple[int, int]:
        """Selector items first, then the CUDA key: minor over major over any."""
        selector = (self.platform is not None) + len(self.keys)
        return selector, (2 if "." in self.cuda else 1 if self.cuda else 0)

    def __str__(self) -> str:
        selector = ",".join([*([self.platform] if self.platform else []),
                             *(f"{k}={v}" for k, v in self.keys)])  # fmt: skip
        return f"{selector}:{self.cuda}" if selector else self.cuda


def _list_key(item: str, option: str) -> tuple[ArchListKey, str]:
    head, colon, rest = item.rpartition(":") if ":" in item else ("", "", item)
    cuda, sep, text = rest.partition("=")
    if not sep:
        cuda, text = "", rest
    cuda = cuda.strip()
    if cuda and not _CUDA_KEY.fullmatch(cuda):
        raise InvalidArchList(
            f"{option} {quote(item)}: {quote(cuda)} is no CUDA version; {_EXPECTED_KEY}"
        )
    platform: str | None = None
    keys: list[tuple[str, str]] = []
    for part in (p.strip() for p in head.split(",")) if colon else ():
        match = _VARIANT_KEY.fullmatch(part)
        if match is not None:
            keys.append((match["key"], match["value"]))
        elif _PLATFORM.fullmatch(part) and platform is None:
            platform = part
        else:
            raise InvalidArchList(
                f"{option} {quote(item)}: {quote(part)} is no platform or KEY=VALUE; "
                + _EXPECTED_KEY
            )
    return ArchListKey(platform, tuple(sorted(keys)), cuda), text


@dataclass(frozen=True, slots=True)
class ArchLists:
    """Architecture lists given per CUDA version (``--arch-list 12.9=LIST``), per major
    (``13=LIST``) or for every CUDA build (``LIST``), optionally for one platform or the builds
    with some variant keys only (``linux-aarch64,arm_variant_type=tegra:12.9=LIST``)."""

    lists: tuple[tuple[ArchListKey, ArchSet], ...] = ()

    @classmethod
    def parse(cls, items: Iterable[str], *, option: str = "--arch-list") -> ArchLists:
        """:raises InvalidArchList: a malformed key, list or a key given twice."""
        lists: dict[ArchListKey, ArchSet] = {}
        for item in items:
            key, text = _list_key(item, option)
            if key in lists:
                raise InvalidArchList(f"{option} {str(key) or '(any CUDA)'} given twice")
            where = f"{option} {key}".rstrip()
            lists[key] = parse_arch_list(text, where=where)
        return cls(tuple(lists.items()))

    def find(
        self, cuda: str, *, platform: str = "linux-64", variant: Mapping[str, str] = {}
    ) -> tuple[str, ArchSet] | None:
        """The list for a build of CUDA ``major.minor`` *cuda* on *platform* with *variant*'s
        keys: the most specific that applies (selector, then CUDA version over major over any);
        ``None`` when none does.

        :raises InvalidArchList: two lists apply equally (``linux-aarch64:12.9=`` and
            ``arm_variant_type=tegra:12.9=`` to a tegra build).
        """
        found = [(k, a) for k, a in self.lists if k.matches(cuda, platform, variant)]
        if not found:
            return None
        best = max(k.specificity for k, _ in found)
        top = [(k, a) for k, a in found if k.specificity == best]
        if len(top) > 1:
            raise InvalidArchList(
                f"--arch-list {top[0][0]} and {top[1][0]} both apply to the CUDA {cuda} build "
                f"for {platform}; make one more specific"
            )
        return str(top[0][0]), top[0][1]
