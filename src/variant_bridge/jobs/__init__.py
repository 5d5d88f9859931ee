"""Use cases: one per command family, wiring the adapters (detect/, indexes/, install/,
export/) to the pure core."""

__all__: list[str] = []
