"""Gather, scatter and reordering kernels: integer/boolean-array indexing, take_along_axis, repeat, roll.

Index arrays arrive unchecked inside a capture (the namespace validates their bounds only where it may
read device data), so every kernel wraps negative indices and clips the rest into the axis: a replay on
new index data can give wrong values but never touches memory outside the array.
"""

from __future__ import annotations


def kernels(m) -> dict:
    def index(a, n: int):
        """Integer indices ``a`` into an axis of size ``n`` (> 0), as in-bounds int64 positions."""
        a = a.astype(m.int64)
        a = m.where(a < 0, a + n, a)
        return m.clip(a, 0, n - 1)

    def native_key(arrays, p) -> tuple:
        """The launch's index key: ``p["key"]`` with the index arrays put at their positions."""
        key = list(p["key"])
        for a, (pos, n) in zip(arrays, p["arrays"]):
            key[pos] = a if n is None else index(a, n)  # n is None for boolean masks
        return tuple(key)

    def gather(ins, outs, p):
        m.copyto(outs[0], ins[0][native_key(ins[1:], p)])

    def scatter(ins, outs, p):
        # ins[0]: the values, already broadcast to the indexed shape (or a scalar of the target's dtype)
        outs[0][native_key(ins[1:], p)] = ins[0]

    def mask_assign(ins, outs, p):
        # ins: (mask, values), both broadcast to the target's shape
        m.copyto(outs[0], ins[1], where=ins[0], casting="unsafe")

    def mask_count(ins, outs, p):
        outs[0][...] = m.count_nonzero(ins[0])

    def index_range(ins, outs, p):
        a = ins[0]
        outs[0][0] = a.min()
        outs[0][1] = a.max()

    def take_along_axis(ins, outs, p):
        m.copyto(outs[0], m.take_along_axis(ins[0], index(ins[1], p["n"]), p["axis"]))

    def repeat(ins, outs, p):
        m.copyto(outs[0], m.repeat(ins[0], list(p["repeats"]), p["axis"]))

    def roll(ins, outs, p):
        m.copyto(outs[0], m.roll(ins[0], p["shift"], p["axis"]))

    return {"gather": gather, "scatter": scatter, "mask_assign": mask_assign, "mask_count": mask_count,
            "index_range": index_range, "take_along_axis": take_along_axis, "repeat": repeat, "roll": roll}
