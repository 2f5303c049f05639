"""The linalg extension (being written)."""

__all__: list[str] = []
