"""A stand-in for conda, for the plugin's tests only: conda is on no package registry, so CI
cannot install it. Written here from conda's documented plugin API (the hook names and the
dataclass shapes of ``conda.plugins.types``, landscape-2026-11-26.md §1.2; conda's docs), not
copied from conda. It has what the plugin touches and no more; tests put it on ``sys.path``
themselves (tests/conda_plugin/conftest.py), never the package.
"""

__version__ = "26.11.0+standin"


class CondaError(Exception):
    """conda's base error: shown as ``ClassName: message``; exit status :attr:`return_code`."""

    return_code = 1

    def __init__(self, message: str = "", caused_by: object = None, **kwargs: object) -> None:
        self.message = message
        self._kwargs = kwargs
        self._caused_by = caused_by
        super().__init__(message)

    def __str__(self) -> str:
        return str(self.message) % self._kwargs if self._kwargs else str(self.message)

    def __repr__(self) -> str:
        return f"{type(self).__name__}: {self}"
