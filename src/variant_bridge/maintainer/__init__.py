"""Maintainer tooling (layer 2): both sides of a release as files say them, and the files a
declared build matrix generates.

The conda side: rendered ``.ci_support`` configurations, rattler-build recipes and
``variants.yaml`` (py-rattler-build, imported lazily and run in a child process), built
``.conda`` packages. The wheel side: wheels folders and indexes (through :mod:`variant_bridge.
indexes`), ``*-variants.json`` files and declarations (variant-repack, scikit-build-core). The
matrix: its declaration (``[tool.variant-bridge.matrix]``) and what it writes for both
ecosystems. Comparisons and the matrix model are pure (:mod:`variant_bridge.release_check`,
:mod:`variant_bridge.build_matrix`).
"""
