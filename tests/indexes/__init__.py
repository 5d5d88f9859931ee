"""Tests of variant_bridge.indexes: find-links, simple indexes, downloads."""
