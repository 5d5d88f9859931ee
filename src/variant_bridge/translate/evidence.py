"""Which CUDA toolkit a variant was built against, from evidence.

Real publishers do not always say it in the variant properties: torch 2.9.0's ``cuda12.6`` and
``cuda12.8`` both declare ``cuda_version_lower_bound :: 12.0`` and differ by the CUDA component
wheels each pins (``nvidia-cublas==12.8.4.1; variant_label == 'cuda12.8'``). The evidence of a
variant is its minor-precise lower bound and every pinned CUDA component that ``names.yaml`` maps
to a CUDA release; the strongest (newest) one is the variant's toolkit (semantics.md §8).

:func:`toolkit_evidence` computes it from a :class:`~variant_bridge.properties.VariantDescription`
and the ``Requires-Dist`` that apply to that variant (variant markers already evaluated, see
:mod:`variant_bridge.markers`); :func:`judge_toolkit` says whether the toolkit policy accepts it.

:func:`wheel_toolkit` is the toolkit rule shared by the commands (semantics.md §6.0.1): pinned
components first, then the label where its publisher's convention is documented
(``toolkits.yaml``: ``cu126``, ``cuda12.8``; ``cu12``, ``cuda12`` = any 12.x, a per-major wheel),
then the lower bound. ``check`` reads it today; ``select``, ``solve`` and ``index`` are to.

>>> from packaging.requirements import Requirement
>>> from variant_bridge.properties import VariantDescription
>>> variant = VariantDescription.parse("cuda12.8: nvidia :: cuda_version_lower_bound :: 12.0")
>>> found = toolkit_evidence(variant, [Requirement("nvidia-cublas==12.8.4.1")])
>>> str(found.toolkit), found.strongest.text
('12.8', 'pins nvidia-cublas 12.8.4.1 (conda: libcublas, CUDA 12.8)')
"""

from __future__ import annotations

import enum
from collections.abc import Iterable

from packaging.requirements import Requirement
from packaging.utils import canonicalize_name
from packaging.version import Version

from variant_bridge._values import value
from variant_bridge.environment import Environment, PythonDistribution, Toolkit
from variant_bridge.errors import InvalidTarget
from variant_bridge.mappings import MappingTables, NameMapping, load_tables
from variant_bridge.markers import VariantValues, evaluate_dependencies, target_environment
from variant_bridge.platform_tags import TargetPython
from variant_bridge.properties import VariantDescription
from variant_bridge.translate import cuda
from variant_bridge.translate._words import toolkit_text
from variant_bridge.translate.supported import Bound, Limit, NvidiaBasis, SupportedProperties

__all__ = [
    "CudaVersion",
    "Evidence",
    "EvidenceKind",
    "InstalledToolkit",
    "ToolkitBasis",
    "ToolkitEvidence",
    "WheelToolkit",
    "installed_toolkit",
    "judge_toolkit",
    "judge_wheel_toolkit",
    "toolkit_bound",
    "toolkit_evidence",
    "wheel_toolkit",
]


class EvidenceKind(enum.Enum):
    """What one piece of evidence is; the value is how ``--json`` names it."""

    LOWER_BOUND = "lower-bound"
    """The variant's ``nvidia :: cuda_version_lower_bound``."""
    PINNED_COMPONENT = "pinned-component"
    """A ``Requires-Dist`` pinning a CUDA component wheel (``nvidia-cublas==12.8.4.1``)."""


@value
class CudaVersion:
    """A CUDA ``major.minor``, or a major alone when that is all the evidence says.

    Ordered as ``@dataclass(order=True)`` orders it: by ``(major, minor)``, written out here so
    that defining the class compiles nothing (comparing a major alone with a ``major.minor`` of
    the same major raises :class:`TypeError` there too: :attr:`key` orders those)."""

    major: int
    minor: int | None = None

    def __lt__(self, other: CudaVersion) -> bool:
        if other.__class__ is not self.__class__:
            return NotImplemented
        return (self.major, self.minor) < (other.major, other.minor)

    def __le__(self, other: CudaVersion) -> bool:
        if other.__class__ is not self.__class__:
            return NotImplemented
        return (self.major, self.minor) <= (other.major, other.minor)

    def __gt__(self, other: CudaVersion) -> bool:
        if other.__class__ is not self.__class__:
            return NotImplemented
        return (self.major, self.minor) > (other.major, other.minor)

    def __ge__(self, other: CudaVersion) -> bool:
        if other.__class__ is not self.__class__:
            return NotImplemented
        return (self.major, self.minor) >= (other.major, other.minor)

    @property
    def key(self) -> tuple[int, int]:
        """For ordering: a major alone sorts below every minor of it."""
        return (self.major, -1 if self.minor is None else self.minor)

    def __str__(self) -> str:
        return str(self.major) if self.minor is None else f"{self.major}.{self.minor}"


@value
class Evidence:
    """One fact saying which CUDA a variant was built against, with its display text."""

    kind: EvidenceKind
    cuda: CudaVersion
    text: str
    """``pins nvidia-cublas 12.8.4.1 (conda: libcublas, CUDA 12.8)`` or
    ``declares cuda_version_lower_bound 12.8``."""
    pypi: str | None = None
    """The pinned component's PyPI name (canonical), for :attr:`EvidenceKind.PINNED_COMPONENT`."""
    version: str | None = None
    """The pinned version (or the lower bound's value)."""
    conda: str | None = None
    """The conda package the component is (``libcublas``)."""
    rule: str | None = None
    """The source of the ``names.yaml`` rule that placed the version."""


@value
class ToolkitEvidence:
    """Everything known about the CUDA toolkit of one variant."""

    label: str
    evidence: tuple[Evidence, ...] = ()
    gaps: tuple[str, ...] = ()
    """CUDA components pinned at versions ``names.yaml`` cannot place (a table gap), in words."""

    @property
    def strongest(self) -> Evidence | None:
        """The newest evidence; of equals, a pin (what the build ships) before a lower bound (a
        floor), then the first found."""
        best: Evidence | None = None
        for item in self.evidence:
            if best is None or _strength(item) > _strength(best):
                best = item
        return best

    @property
    def toolkit(self) -> CudaVersion | None:
        strongest = self.strongest
        return strongest.cuda if strongest is not None else None

    @property
    def known(self) -> bool:
        """A minor-precise toolkit is known (a major alone leaves it unknown)."""
        toolkit = self.toolkit
        return toolkit is not None and toolkit.minor is not None

    def summary(self) -> str:
        """``toolkit CUDA 12.8: pins nvidia-cublas 12.8.4.1 (...)``, ``toolkit CUDA 12.0 or
        newer: declares cuda_version_lower_bound 12.0`` (a floor only), or why it is unknown."""
        strongest = self.strongest
        if strongest is None or strongest.cuda.minor is None:
            known = f" beyond CUDA {strongest.cuda} ({strongest.text})" if strongest else ""
            return (
                f"CUDA toolkit unknown{known}: no minor-precise cuda_version_lower_bound and no "
                "pinned CUDA component names.yaml can place"
            )
        if strongest.kind is EvidenceKind.LOWER_BOUND:
            return (
                f"toolkit CUDA {strongest.cuda} or newer: {strongest.text}, no CUDA component pin"
            )
        return f"toolkit CUDA {strongest.cuda}: {strongest.text}"


class ToolkitBasis(enum.Enum):
    """What a wheel's toolkit (:class:`WheelToolkit`) was read from, strongest first; the value
    is how ``--json`` names it."""

    PINS = "pinned-components"
    LABEL = "label"
    LOWER_BOUND = "lower-bound"


@value
class WheelToolkit:
    """The CUDA toolkit a wheel variant is taken to be built with, and why.

    A per-major wheel (``cu12``: lower bound 12.0 or none, no minor-specific pin) has
    :attr:`cuda` ``12`` and belongs beside any CUDA 12 toolkit; it is never a 12.0 build.
    """

    cuda: CudaVersion
    basis: ToolkitBasis
    text: str
    """``pins nvidia-cublas 12.8.4.1 (...)``, ``its label 'cu126' says CUDA 12.6``..."""
    per_major: bool = False

    @property
    def floor_only(self) -> bool:
        """Only a lower bound says it: a floor (``12.0 or newer``), not the build's toolkit."""
        return self.basis is ToolkitBasis.LOWER_BOUND

    def accepts(self, toolkit: CudaVersion) -> bool:
        """Whether the wheel belongs beside *toolkit* (a conda ``cuda-version``, a matrix's
        CUDA): the same major, and for a minor-precise wheel that minor or a newer one."""
        if toolkit.major != self.cuda.major:
            return False
        if self.per_major or self.cuda.minor is None or toolkit.minor is None:
            return True
        return toolkit.minor >= self.cuda.minor

    def matches(self, toolkit: CudaVersion) -> bool:
        """Whether the wheel belongs in a stack built with *toolkit* (one stack, one toolkit;
        semantics.md §6.6): a build of one minor only with that minor; a per-major wheel, a
        major alone or a stack toolkit that is a major alone with any minor of the major; a
        floor with the minors it allows."""
        if toolkit.major != self.cuda.major:
            return False
        exact = self.exact
        if exact is None or toolkit.minor is None:
            return self.accepts(toolkit) if self.floor_only else True
        return exact == toolkit

    def shares(self, other: WheelToolkit) -> bool:
        """Whether the two builds can sit in one stack: some toolkit both :meth:`matches` (the
        same minor for two builds of one minor; the same major otherwise, within the floors)."""
        mine, theirs = self.exact, other.exact
        if mine is not None:
            return other.matches(mine)
        if theirs is not None:
            return self.matches(theirs)
        if self.cuda.major != other.cuda.major:
            return False
        floor = max(self.cuda, other.cuda, key=lambda c: c.key)
        return self.matches(floor) and other.matches(floor)

    @property
    def exact(self) -> CudaVersion | None:
        """The one CUDA minor the wheel was built with (pins or a label saying a minor);
        ``None`` for a per-major wheel, a floor, or a major alone."""
        if self.per_major or self.floor_only or self.cuda.minor is None:
            return None
        return self.cuda

    def summary(self) -> str:
        """``toolkit CUDA 12.6: pins nvidia-cublas 12.6.4.1 (...)``, ``toolkit CUDA 12.8: its
        label 'cuda12.8' says CUDA 12.8, no CUDA component pin``, ``toolkit CUDA 12.x: ...``,
        ``toolkit CUDA 12.0 or newer: declares ..., no CUDA component pin``."""
        if self.basis is ToolkitBasis.PINS and self.cuda.minor is None:
            return f"CUDA toolkit unknown beyond CUDA {self.cuda} ({self.text})"
        unpinned = (
            "" if self.basis is ToolkitBasis.PINS or self.per_major else ", no CUDA component pin"
        )
        return f"toolkit {self}: {self.text}{unpinned}"

    def __str__(self) -> str:
        if self.per_major:
            return f"CUDA {self.cuda}.x"
        return f"CUDA {self.cuda}" + (" or newer" if self.floor_only else "")


def wheel_toolkit(
    description: VariantDescription,
    evidence: ToolkitEvidence | None = None,
    *,
    tables: MappingTables | None = None,
) -> WheelToolkit | None:
    """The toolkit of one wheel variant: the newest minor-precise pinned CUDA component, else
    what its label says by a convention of ``toolkits.yaml`` (a minor; or a major alone: a
    per-major wheel when no lower bound says a minor above ``.0``), else its lower bound, else
    a pin saying a major only; ``None`` when nothing says anything.

    :param evidence: the variant's :func:`toolkit_evidence` when its ``Requires-Dist`` were
        read; without it the properties and the label decide.
    """
    tables = tables if tables is not None else load_tables()
    found = evidence.evidence if evidence is not None else tuple(_lower_bounds(description, tables))
    pins = [e for e in found if e.kind is EvidenceKind.PINNED_COMPONENT]
    minor_pins = [e for e in pins if e.cuda.minor is not None]
    if minor_pins:
        best = max(minor_pins, key=lambda e: e.cuda.key)
        return WheelToolkit(best.cuda, ToolkitBasis.PINS, best.text)
    bounds = [e for e in found if e.kind is EvidenceKind.LOWER_BOUND]
    bound = min(bounds, key=lambda e: e.cuda.key) if bounds else None
    said = tables.toolkits.label_cuda(description.label)
    if said is not None:
        (major, minor), _ = said
        label = description.label
        if minor is not None:
            text = f"its label {label!r} says CUDA {major}.{minor}"
            return WheelToolkit(CudaVersion(major, minor), ToolkitBasis.LABEL, text)
        if bound is None or bound.cuda.major != major or not bound.cuda.minor:
            text = f"its label {label!r} says any CUDA {major}.x (a per-major wheel)"
            return WheelToolkit(CudaVersion(major), ToolkitBasis.LABEL, text, per_major=True)
        text = f"{bound.text} (its label {label!r} says CUDA {major})"
        return WheelToolkit(bound.cuda, ToolkitBasis.LOWER_BOUND, text)
    if bound is not None:
        return WheelToolkit(bound.cuda, ToolkitBasis.LOWER_BOUND, bound.text)
    if pins:  # components that say a major only (nvidia-cudnn-cu12)
        best = max(pins, key=lambda e: e.cuda.key)
        return WheelToolkit(best.cuda, ToolkitBasis.PINS, best.text)
    return None


def _strength(item: Evidence) -> tuple[tuple[int, int], bool]:
    return item.cuda.key, item.kind is EvidenceKind.PINNED_COMPONENT


def _lower_bounds(description: VariantDescription, tables: MappingTables) -> list[Evidence]:
    table = tables.nvidia
    names = {f.name for f in table.features if f.rule == "cuda_lower_bound"}
    found: list[Evidence] = []
    for prop in description.properties:
        if prop.namespace != table.namespace or prop.feature not in names:
            continue
        shape = cuda.major_minor(prop.value)
        if shape is None:
            continue
        version = CudaVersion(shape[0], shape[1] if "." in prop.value else None)
        text = f"declares {prop.feature} {prop.value}"
        found.append(Evidence(EvidenceKind.LOWER_BOUND, version, text, version=prop.value))
    # Values of one feature are OR-ed: the lowest is all the variant promises.
    return sorted(found, key=lambda e: e.cuda.key)[:1]


def _pinned(requirement: Requirement) -> tuple[str, tuple[int, ...]] | None:
    """``==12.8.4.1`` -> ("12.8.4.1", (12, 8, 4, 1)); ``==12.8.*`` -> ("12.8.*", (12, 8));
    anything but one exact pin -> ``None``."""
    specs = list(requirement.specifier)
    if len(specs) != 1 or specs[0].operator not in ("==", "==="):
        return None
    text = specs[0].version
    try:
        release = Version(text.removesuffix(".*")).release
    except ValueError:  # InvalidVersion, or a number past int()'s 4300 digits
        return None
    return text, release


def _component(requirement: Requirement, mapping: NameMapping) -> Evidence | str | None:
    """The evidence one pin gives, a table gap in words, or ``None`` (it says nothing)."""
    pinned = _pinned(requirement)
    if pinned is None:
        return None
    version, release = pinned
    pypi = canonicalize_name(requirement.name)
    where = f"conda: {mapping.conda}"
    if mapping.cuda is not None:
        minor = mapping.cuda.cuda_of(release)
        if minor is not None:
            said = CudaVersion(*minor)
            text = f"pins {pypi} {version} ({where}, CUDA {said})"
            return Evidence(
                EvidenceKind.PINNED_COMPONENT, said, text, pypi, version, mapping.conda,
                mapping.cuda.source,
            )  # fmt: skip
    if mapping.cuda_major is not None:
        said = CudaVersion(mapping.cuda_major)
        text = f"pins {pypi} {version} ({where}, CUDA {said} by its name)"
        return Evidence(EvidenceKind.PINNED_COMPONENT, said, text, pypi, version, mapping.conda)
    if mapping.cuda is not None:
        return f"names.yaml has no CUDA release for {mapping.conda} {version} (pinned as {pypi})"
    return None


def toolkit_evidence(
    description: VariantDescription,
    requirements: Iterable[Requirement],
    *,
    tables: MappingTables | None = None,
) -> ToolkitEvidence:
    """The CUDA toolkit evidence of one variant.

    :param requirements: the ``Requires-Dist`` that apply to this variant on the target (variant
        markers evaluated, extras left out); their markers are not read again.
    """
    tables = tables if tables is not None else load_tables()
    evidence = _lower_bounds(description, tables)
    gaps: list[str] = []
    for requirement in requirements:
        mapping = tables.names.conda_for_pypi(requirement.name)
        if mapping is None or mapping.kind != "cuda-library":
            continue
        found = _component(requirement, mapping)
        if isinstance(found, Evidence):
            evidence.append(found)
        elif found is not None:
            gaps.append(found)
    return ToolkitEvidence(description.label, tuple(evidence), tuple(gaps))


def toolkit_bound(
    supported: SupportedProperties, *, tables: MappingTables | None = None
) -> Bound | None:
    """The toolkit the forward translation compared lower bounds with, or ``None`` when it
    used the driver policy (or the toolkit could not be read)."""
    tables = tables if tables is not None else load_tables()
    basis = supported.bases.get(tables.nvidia.namespace)
    if not isinstance(basis, NvidiaBasis):
        return None
    for bounds in basis.bounds.values():
        for bound in bounds:
            if bound.limit is Limit.TOOLKIT_AT_LEAST:
                return bound
    return None


def judge_toolkit(evidence: ToolkitEvidence, bound: Bound | None) -> str | None:
    """Why the toolkit policy refuses a variant by its evidence; ``None`` when it does not.

    With evidence ``W`` and the toolkit ``T`` of *bound*: consistent only if ``major(W) ==
    major(T)`` and ``W <= T`` (a major alone compares by major). No *bound* (driver policy) or no
    evidence: nothing to refuse.
    """
    strongest = evidence.strongest
    if bound is None or strongest is None:
        return None
    said, (major, minor) = strongest.cuda, bound.version
    fact = bound.fact
    owner = toolkit_text(fact) if isinstance(fact, Toolkit) else f"the toolkit is {major}.{minor}"
    if said.major != major:
        return f"{evidence.label} {strongest.text} but {owner} (CUDA {major})"
    if said.minor is not None and said.minor > minor:
        return f"{evidence.label} {strongest.text} but {owner}"
    return None


def judge_wheel_toolkit(
    label: str, toolkit: WheelToolkit | None, bound: Bound | None
) -> str | None:
    """Why the toolkit policy refuses a wheel variant by its toolkit (the shared rule,
    :func:`wheel_toolkit`: pins, else the label, else the lower bound); ``None`` when it does
    not.

    With the toolkit ``T`` of *bound*: refused unless :meth:`WheelToolkit.accepts` ``T`` (the
    same major; a minor-precise toolkit ``W <= T``; a per-major wheel any minor). No *bound*
    (driver policy) or no toolkit: nothing to refuse.
    """
    if bound is None or toolkit is None:
        return None
    major, minor = bound.version
    if toolkit.accepts(CudaVersion(major, minor)):
        return None
    fact = bound.fact
    owner = toolkit_text(fact) if isinstance(fact, Toolkit) else f"the toolkit is {major}.{minor}"
    said = f"{label} {toolkit.text}" if toolkit.basis is ToolkitBasis.PINS else toolkit.text
    if toolkit.cuda.major != major:
        return f"{said} but {owner} (CUDA {major})"
    return f"{said} but {owner}"


@value
class InstalledToolkit:
    """The toolkit evidence of an installed variant wheel, judged against its environment."""

    evidence: ToolkitEvidence
    refused: str | None
    """Why the toolkit policy would not have chosen it (the environment's mismatch), or ``None``."""
    problems: tuple[str, ...] = ()
    toolkit: WheelToolkit | None = None
    """Its toolkit by the commands' shared rule (pins, else the label, else the lower bound)."""


def installed_toolkit(
    dist: PythonDistribution,
    env: Environment,
    supported: SupportedProperties,
    *,
    tables: MappingTables | None = None,
) -> InstalledToolkit | None:
    """The evidence of an installed (or locked) variant wheel from its own ``Requires-Dist``,
    and its toolkit by the shared rule (the label counts), judged as ``select`` would judge it
    in *env*; ``None`` for a wheel that is no known variant."""
    description = dist.variant
    if description is None or description.is_null:
        return None
    tables = tables if tables is not None else load_tables()
    try:
        python = TargetPython.parse(env.python or "0.0")
    except InvalidTarget:
        python = TargetPython.parse("0.0")  # unreadable: as unknown
    environment = target_environment(env, python, tables=tables)
    if python.version.release == (0, 0):
        del environment["python_version"]  # unknown: a marker using it is a problem, not 0.0
    evaluated = evaluate_dependencies(dist.requires, environment, VariantValues.of(description))
    found = toolkit_evidence(
        description, [d.requirement for d in evaluated.applying], tables=tables
    )
    said = wheel_toolkit(description, found, tables=tables)
    refused = judge_wheel_toolkit(description.label, said, toolkit_bound(supported, tables=tables))
    return InstalledToolkit(found, refused, evaluated.problems + found.gaps, said)
