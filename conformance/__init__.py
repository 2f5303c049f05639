"""Conformance runs of numr_array against data-apis/array-api-tests (see docs/conformance.md)."""
