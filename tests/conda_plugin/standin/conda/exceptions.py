"""conda's errors the plugin and the stand-in raise or catch."""

from conda import CondaError

__all__ = [
    "CondaError",
    "CondaSystemExit",
    "CondaValueError",
    "DryRunExit",
    "EnvironmentLocationNotFound",
    "EnvironmentNameNotFound",
    "PluginError",
]


class PluginError(CondaError):
    pass


class CondaValueError(CondaError, ValueError):
    pass


class CondaExitZero(CondaError):
    return_code = 0


class DryRunExit(CondaExitZero):
    def __init__(self) -> None:
        super().__init__("Dry run. Exiting.")


class CondaSystemExit(CondaExitZero, SystemExit):
    pass


class EnvironmentNameNotFound(CondaError):
    def __init__(self, name: str) -> None:
        super().__init__(f"Could not find conda environment: {name}")


class EnvironmentLocationNotFound(CondaError):
    def __init__(self, location: str) -> None:
        super().__init__("Not a conda environment: %(location)s", location=location)
