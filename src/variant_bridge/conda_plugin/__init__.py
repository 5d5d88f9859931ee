"""variant-bridge inside conda: a conda plugin (layer 3, a shell beside ``cli/``; docs/conda.md).

conda imports :mod:`.hooks` at every start-up (entry point group ``conda``), so that module
imports nothing but conda's own plugin markers and types, which conda has loaded already. Each
hook's work lives in a module imported when the hook runs:

- :mod:`.subcommand`: ``conda variant ...``, the CLI's commands against conda's target;
- :mod:`.facts`: this machine's virtual packages as conda's plugin manager reports them;
- :mod:`.exporters`: ``conda export --format variant-...``;
- :mod:`.doctor`: the ``conda doctor`` check and its fixer;
- :mod:`.after_change`: the warning after a conda change breaks a variant wheel's agreement;
- :mod:`.cuda_arch`: the opt-in ``__cuda_arch`` virtual package;
- :mod:`.settings`: the plugin's conda settings; :mod:`._compat`: conda's fields that changed
  across releases; :mod:`.errors`: conda-style one-line errors.

Nothing below this package imports conda (the layering contract in pyproject.toml).
"""
