"""The copy (with a cast) and fill kernels, which other kernel families run on their temporaries too."""

from __future__ import annotations

from ._map import run_map
from ._types import cast, wt


def copy(client, ins, outs, p):
    ow = wt(outs[0]._dtype)
    run_map(client, "copy", None, outs, ins, lambda g: g.store(0, cast(g.val(0), g.wt_in(0), ow)))


def fill(client, ins, outs, p):
    ow = wt(outs[0]._dtype)
    run_map(client, "fill", None, outs, (), lambda g: g.store(0, g.param(0)), params=[(ow, p["value"])])
