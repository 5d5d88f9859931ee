"""What one package of a GPU stack is chosen for: the stack's toolkit and whose choice set it.

The values :mod:`._stack` plans with and :mod:`._choice` chooses with (one stack, one CUDA
toolkit; docs/semantics.md §6.6): :class:`StackToolkit` (a CUDA toolkit, any CUDA build, or the
CPU builds), :class:`Option` (one build a package could take, with its toolkit) and
:class:`Follow` (the toolkit a package is chosen for, with the words its verdict says).
"""

from __future__ import annotations

from variant_bridge._values import value
from variant_bridge.properties import VariantDescription
from variant_bridge.translate.evidence import CudaVersion, ToolkitBasis, WheelToolkit

__all__ = ["Follow", "Option", "StackToolkit", "is_cuda"]


@value
class StackToolkit:
    """What a stack is built with: a CUDA toolkit (a minor, or a major alone), any CUDA build
    (nothing says which), or the CPU builds (:attr:`cuda` ``None``, :attr:`any_cuda` off)."""

    cuda: CudaVersion | None = None
    any_cuda: bool = False

    @property
    def cpu(self) -> bool:
        return self.cuda is None and not self.any_cuda

    def __str__(self) -> str:
        if self.cuda is not None:
            return f"CUDA {self.cuda}" + (".x" if self.cuda.minor is None else "")
        return "a CUDA build" if self.any_cuda else "a build without CUDA"


@value
class Follow:
    """The toolkit one package of a stack is chosen for, and whose choice decided it."""

    toolkit: StackToolkit
    anchor: str
    """``torch 2.9.0 cuda12.6``: the anchor and its build."""
    follows: bool
    """The package requires a member of its stack (torchvision -> torch): it *follows*."""
    moved: str | None = None
    """For the anchor itself: why it does not keep its own first choice."""

    def reason(self) -> str:
        """What the accepted build's verdict adds (``follows torch 2.9.0 cuda12.6``)."""
        if self.moved is not None:
            return f"{self.toolkit}, the one toolkit its stack can share ({self.moved})"
        verb = "follows" if self.follows else "one CUDA toolkit with"
        return f"{verb} {self.anchor} ({self.toolkit})"

    def refusal(self, option: Option) -> str:
        """Why a build of another toolkit is not taken."""
        what = option.toolkit.summary() if option.toolkit is not None else str(option)
        if self.moved is not None:
            return f"not {self.toolkit}, the one toolkit its stack can share ({self.moved}): {what}"
        return f"not {self.toolkit}, the toolkit of {self.anchor} (one stack, one toolkit): {what}"


@value
class Option:
    """One build a package of a stack could take: its label and toolkit."""

    label: str | None
    """``None``: a plain (non-variant) wheel."""
    toolkit: WheelToolkit | None
    cuda: bool
    """A CUDA build (a variant of the ``nvidia`` namespace, or one with a toolkit)."""

    def agrees(self, stack: StackToolkit) -> bool:
        if stack.cpu:
            return not self.cuda
        if not self.cuda:
            return False
        if stack.cuda is None or self.toolkit is None:
            return True  # nothing says which CUDA: it cannot disagree
        return self.toolkit.matches(stack.cuda)

    def stack(self) -> StackToolkit:
        """The toolkit a stack anchored on this build is built with."""
        if not self.cuda:
            return StackToolkit()
        toolkit = self.toolkit
        if toolkit is None:
            return StackToolkit(any_cuda=True)
        exact = toolkit.exact
        return StackToolkit(exact if exact is not None else CudaVersion(toolkit.cuda.major))

    @property
    def strength(self) -> int:
        """Lower is stronger: pins, a label saying a minor, a floor, a major, nothing."""
        toolkit = self.toolkit
        if toolkit is None or not self.cuda:
            return 4
        if toolkit.exact is not None:
            return 0 if toolkit.basis is ToolkitBasis.PINS else 1
        return 2 if toolkit.floor_only and toolkit.cuda.minor is not None else 3

    def __str__(self) -> str:
        name = "the plain wheel" if self.label is None else self.label
        if not self.cuda:
            return f"{name} (CPU)"
        return f"{name} ({self.toolkit})" if self.toolkit is not None else f"{name} (CUDA)"


def is_cuda(description: VariantDescription | None, namespace: str) -> bool:
    return description is not None and namespace in description.namespaces
