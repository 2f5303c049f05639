"""Every code example in README.md and docs/*.md runs, in page order, and prints what the page shows.

The conventions (docs/architecture.md, "Documentation examples"):

* A fenced ```python block is an example and always runs. Shell commands are ```bash, program output and
  other text ```text; any other fence language is an error here, so no example is left out silently.
* The blocks of one page run in order in one namespace: a later block sees what earlier ones defined.
* A ```text block that directly follows a ```python block (only blank lines between) is that block's
  expected standard output, compared exactly (trailing spaces and blank lines aside).
* An HTML comment on the line(s) before a block sets how it runs (MyST does not render it):
  ``<!-- device: webgpu:0 -->`` runs the block with webgpu:0 as the default device (skipped, naming the
  device, where it is absent); ``<!-- requires: cupy, cuda:0 -->`` skips the block, naming what is
  missing, unless every module imports and every device is present; ``requires: float64`` (or int64,
  complex128) needs that dtype on the block's device (an adapter without shader-f64 lacks float64).
* A block skipped for a missing requirement is reported as skipped; blocks after it still run, so a page's
  later blocks must not depend on a block that can be skipped.
"""

from __future__ import annotations

import contextlib
import importlib.util
import io
import re
from dataclasses import dataclass, field
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PAGES = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
RUNS, NOT_RUN = {"python"}, {"bash", "text"}
DTYPE_NEEDS = {"float64", "int64", "complex128"}
FENCE = re.compile(r"^( *)(`{3,})([^`\n]*)$")  # indented too (a block inside a list item)
MARKER = re.compile(r"^<!--\s*(device|requires)\s*:\s*(.*?)\s*-->$")


@dataclass
class Block:
    page: str
    line: int  # 1-based line of the opening fence
    lang: str
    code: str
    device: str | None = None
    requires: list[str] = field(default_factory=list)
    expected: str | None = None  # the following ```text block, when there is one


def parse(text: str, page: str) -> list[Block]:
    """The fenced blocks of a Markdown page, with their markers and expected output."""
    lines = text.splitlines()
    blocks: list[Block] = []
    markers: dict[str, str] = {}
    last_python: Block | None = None  # a ```python block that only blank lines follow so far
    i = 0
    while i < len(lines):
        line = lines[i]
        fence = FENCE.match(line)
        if fence is None:
            m = MARKER.match(line.strip())
            if m:
                markers[m.group(1)] = m.group(2)
            elif line.strip():
                markers.clear()
                last_python = None
            i += 1
            continue
        indent, ticks, lang = len(fence.group(1)), fence.group(2), fence.group(3).strip()
        end = next((j for j in range(i + 1, len(lines)) if lines[j].strip() == ticks), None)
        assert end is not None, f"{page}:{i + 1}: unclosed fence"
        code = "\n".join(line[indent:] for line in lines[i + 1:end]) + "\n"
        block = Block(page, i + 1, lang, code, markers.get("device"),
                      [r.strip() for r in markers.get("requires", "").split(",") if r.strip()])
        if lang == "text" and last_python is not None:
            last_python.expected = block.code
        last_python = block if lang == "python" else None
        markers.clear()
        blocks.append(block)
        i = end + 1
    return blocks


def _page_blocks() -> list[Block]:
    return [b for p in PAGES for b in parse(p.read_text(), str(p.relative_to(ROOT)))]


EXAMPLES = [b for b in _page_blocks() if b.lang in RUNS]


def _normalise(text: str) -> str:
    return "\n".join(line.rstrip() for line in text.strip("\n").splitlines())


def _missing(block: Block) -> list[str]:
    import numr_array as xp
    present = {str(d) for d in xp.__array_namespace_info__().devices()}
    wanted = block.requires + ([block.device] if block.device else [])
    missing = []
    for need in wanted:
        if need in DTYPE_NEEDS:  # a dtype the block's device must have (float64: shader-f64 on WebGPU)
            dev = block.device or "cpu"
            if dev in present and getattr(xp, need) not in xp.__array_namespace_info__().dtypes(device=dev).values():
                missing.append(f"{need} on {dev}")
        elif re.fullmatch(r"(cpu|cuda|webgpu)(:\d+)?", need):
            if need not in present and not any(d.startswith(need + ":") for d in present):
                missing.append(f"device {need}")
        elif importlib.util.find_spec(need) is None:
            missing.append(f"module {need}")
    return missing


# one namespace per page, shared by its blocks in order; a page whose block failed stops there
_namespaces: dict[str, dict] = {}
_failed: dict[str, str] = {}
#: per page, how many of its blocks this process has run (pytest-xdist may hand a page's blocks to several
#: workers: a worker first runs, silently, the earlier blocks it has not run, which define what later ones use)
_ran: dict[str, int] = {}
_PAGE_EXAMPLES = {}
for _b in EXAMPLES:
    _PAGE_EXAMPLES.setdefault(_b.page, []).append(_b)


@pytest.fixture
def docs_env(monkeypatch):
    """What the pages assume: SciPy in array-API mode (set before it is first imported), the default device
    cpu, and the working directory the repository root."""
    monkeypatch.setenv("SCIPY_ARRAY_API", "1")
    monkeypatch.chdir(ROOT)
    from numr_array import _device
    monkeypatch.setattr(_device, "_default", _device.parse_device("cpu"))
    return _device


@pytest.mark.parametrize("block", EXAMPLES, ids=[f"{b.page}:{b.line}" for b in EXAMPLES])
def test_example(block: Block, docs_env):
    if block.page in _failed:
        pytest.fail(f"not run: the earlier block {_failed[block.page]} of {block.page} failed")
    missing = _missing(block)
    if missing:
        pytest.skip(f"{block.page}:{block.line} needs {', '.join(missing)}")
    namespace = _namespaces.setdefault(block.page, {"__name__": f"doc:{block.page}"})
    page = _PAGE_EXAMPLES[block.page]
    index = page.index(block)
    _failed[block.page] = f"{block.page}:{block.line}"
    for earlier in page[_ran.get(block.page, 0):index]:
        if not _missing(earlier):
            _run(earlier, namespace, docs_env)
    out = _run(block, namespace, docs_env)
    if block.expected is not None:
        assert _normalise(out) == _normalise(block.expected), \
            f"{block.page}:{block.line} printed\n{out}\nthe page shows\n{block.expected}"
    del _failed[block.page]
    _ran[block.page] = index + 1


def _run(block: Block, namespace: dict, docs_env) -> str:
    """Run ``block`` in its page's ``namespace`` with its device as the default one; what it printed."""
    docs_env._default = docs_env.parse_device(block.device or "cpu")  # (the fixture restores cpu)
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        exec(compile(block.code, f"{block.page}:{block.line}", "exec"), namespace)  # noqa: S102 (the page's own code)
    return out.getvalue()


def test_every_fenced_block_is_an_example_or_marked_as_not_run():
    for block in _page_blocks():
        assert block.lang in RUNS | NOT_RUN or block.lang.startswith("{"), \
            f"{block.page}:{block.line}: ```{block.lang} is neither an example (python) nor text/bash"


def test_markers_name_something():
    for block in EXAMPLES:
        for need in block.requires + ([block.device] if block.device else []):
            assert re.fullmatch(r"[\w.]+(:\d+)?", need), f"{block.page}:{block.line}: bad marker {need!r}"


def test_parser_conventions():
    page = ("<!-- device: webgpu:0 -->\n```python\nprint(1)\n```\n\n```text\n1\n```\n"
            "<!-- requires: cupy, cuda:0 -->\n```python\nx = 1\n```\nprose\n```text\nnot output\n```\n"
            "- item\n\n  ```python\n  if x:\n      y = 2\n  ```\n")
    first, out, second, text, indented = parse(page, "p")
    assert indented.code == "if x:\n    y = 2\n"
    assert (first.device, first.expected, first.line) == ("webgpu:0", "1\n", 2)
    assert out.lang == "text" and second.requires == ["cupy", "cuda:0"] and second.device is None
    assert second.expected is None and text.code == "not output\n"
    assert _missing(Block("p", 1, "python", "", requires=["float64", "complex128"])) == []  # cpu has them
    assert _missing(Block("p", 1, "python", "", requires=["no_such_module_xyz", "cuda:7"])) == \
        ["module no_such_module_xyz", "device cuda:7"]
