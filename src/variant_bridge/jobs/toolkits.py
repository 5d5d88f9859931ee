"""Each candidate variant's CUDA toolkit, for the ``select`` job (semantics.md §6.0, §6.0.1).

For every variant label whose properties the target supports, the core metadata of one of its
wheels (the one with the target's best tag) is read, at most once, by the cheapest way the index
allows (:class:`~variant_bridge.indexes.CoreMetadataReader`); its ``Requires-Dist`` are evaluated
for that variant on the target (:mod:`variant_bridge.markers`) and turned into evidence by the
pure core (:func:`~variant_bridge.translate.evidence.toolkit_evidence`); the variant's toolkit is
then the commands' shared rule (:func:`~variant_bridge.translate.evidence.wheel_toolkit`: the
pins, else the label by its publisher's convention, else the lower bound), and the toolkit policy
judges that. A wheel whose metadata cannot be read, a marker that cannot be evaluated or a
names-table gap is a problem of that variant, in words; the other variants are still judged.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence

from packaging.tags import Tag

from variant_bridge._values import value
from variant_bridge.errors import IndexReadError, InvalidMetadata
from variant_bridge.indexes import Candidate, CoreMetadata, CoreMetadataReader
from variant_bridge.mappings import MappingTables
from variant_bridge.markers import VariantValues, evaluate_dependencies
from variant_bridge.properties import VariantDescription
from variant_bridge.ranking import Judge, Judgement
from variant_bridge.translate.evidence import (
    ToolkitEvidence,
    WheelToolkit,
    judge_wheel_toolkit,
    toolkit_evidence,
    wheel_toolkit,
)
from variant_bridge.translate.supported import Bound

__all__ = ["VariantToolkit", "read_toolkits", "toolkit_judge"]


@value
class VariantToolkit:
    """One variant's toolkit evidence and where it was read."""

    label: str
    evidence: ToolkitEvidence
    wheel: str | None = None
    """The wheel whose core metadata was read."""
    metadata: CoreMetadata | None = None
    """``None`` when it could not be read (see :attr:`problems`)."""
    problems: tuple[str, ...] = ()
    """Why the evidence may be incomplete: unreadable metadata, markers, names-table gaps."""
    refused: str | None = None
    """The toolkit policy's reason to refuse the variant; ``None`` when it does not."""
    toolkit: WheelToolkit | None = None
    """The toolkit by the shared rule (pins, else the label, else the lower bound)."""

    def summary(self) -> str:
        said = self.toolkit.summary() if self.toolkit is not None else self.evidence.summary()
        if self.metadata is None and self.problems:
            return f"{said} ({'; '.join(self.problems)})"
        return said


def _best_wheels(
    candidates: Iterable[Candidate], labels: Iterable[str], tags: Sequence[Tag]
) -> dict[str, Candidate]:
    """Per label, the wheel with the target's most preferred tag."""
    rank = {tag: i for i, tag in reversed(list(enumerate(tags)))}
    wanted = set(labels)
    best: dict[str, tuple[int, Candidate]] = {}
    for candidate in candidates:
        label = candidate.label
        if label not in wanted:
            continue
        index = min((rank[t] for t in candidate.filename.tags if t in rank), default=None)
        if index is None:
            continue
        known = best.get(label)
        if known is None or index < known[0]:
            best[label] = (index, candidate)
    return {label: candidate for label, (_, candidate) in best.items()}


def _one(
    description: VariantDescription,
    candidate: Candidate,
    reader: CoreMetadataReader,
    environment: Mapping[str, str],
    tables: MappingTables,
) -> VariantToolkit:
    try:
        metadata = reader.read(candidate)
    except (IndexReadError, InvalidMetadata) as e:
        problem = f"cannot read the core metadata of {candidate.name}: {e}"
        return _unread(description, candidate, problem, tables)
    if metadata is None:
        problem = (
            f"core metadata of {candidate.name} not read: the index offers neither a PEP 658 "
            "metadata file nor range requests, and the wheel is not downloaded to choose"
        )
        return _unread(description, candidate, problem, tables)
    evaluated = evaluate_dependencies(
        metadata.requires_dist, environment, VariantValues.of(description)
    )
    evidence = toolkit_evidence(
        description, [d.requirement for d in evaluated.applying], tables=tables
    )
    problems = tuple(f"{candidate.name}: {p}" for p in evaluated.problems) + evidence.gaps
    return VariantToolkit(description.label, evidence, candidate.name, metadata, problems)


def _unread(
    description: VariantDescription, candidate: Candidate, problem: str, tables: MappingTables
) -> VariantToolkit:
    return VariantToolkit(
        description.label,
        toolkit_evidence(description, (), tables=tables),
        candidate.name,
        problems=(problem,),
    )


def read_toolkits(
    variants: Iterable[VariantDescription],
    candidates: Sequence[Candidate],
    *,
    tags: Sequence[Tag],
    reader: CoreMetadataReader,
    environment: Mapping[str, str],
    bound: Bound | None,
    tables: MappingTables,
) -> dict[str, VariantToolkit]:
    """The toolkit evidence of each of *variants* that has a wheel for the target's *tags*.

    :param variants: the non-null variants worth reading (those the target's properties allow).
    :param environment: the target's PEP 508 marker values.
    :param bound: the toolkit the policy compares with (``None``: driver policy, nothing refused).
    """
    by_label = {v.label: v for v in variants if not v.is_null}
    wheels = _best_wheels(candidates, by_label, tags)
    reader.prefetch(wheels[label] for label in sorted(wheels))  # read one after another below
    found: dict[str, VariantToolkit] = {}
    for label, candidate in sorted(wheels.items()):
        read = _one(by_label[label], candidate, reader, environment, tables)
        said = wheel_toolkit(by_label[label], read.evidence, tables=tables)
        found[label] = VariantToolkit(
            read.label, read.evidence, read.wheel, read.metadata, read.problems,
            judge_wheel_toolkit(label, said, bound), said,
        )  # fmt: skip
    return found


def toolkit_judge(toolkits: Mapping[str, VariantToolkit], namespace: str) -> Judge:
    """The ranker's judge: refuse by the toolkit policy, else say what the toolkit is (for
    variants of the *namespace* (``nvidia``) or with evidence)."""

    def judge(description: VariantDescription) -> Judgement | None:
        toolkit = toolkits.get(description.label)
        if toolkit is None:
            return None
        if toolkit.refused is not None:
            return Judgement(toolkit.refused, compatible=False)
        if toolkit.toolkit is not None or namespace in description.namespaces:
            return Judgement(toolkit.summary())
        return None

    return judge
