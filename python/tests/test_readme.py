"""The README's "From Python" example runs as written (so it cannot drift)."""

import os
import re

from conftest import REPO


def readme_example():
    text = (REPO / "README.md").read_text()
    section = text.split("## From Python", 1)[1].split("\n## ", 1)[0]
    blocks = re.findall(r"```python\n(.*?)```", section, re.S)
    assert len(blocks) == 1, "the section has one Python example"
    return blocks[0]


def test_the_readme_example_runs(tmp_path, capsys):
    code = readme_example()
    assert len(code.strip().splitlines()) <= 10, "the example stays ten lines"
    (tmp_path / "tests").symlink_to(REPO / "tests")
    cwd = os.getcwd()
    os.chdir(tmp_path)
    try:
        exec(compile(code, "README.md", "exec"), {"__name__": "__readme__"})
    finally:
        os.chdir(cwd)
    out = capsys.readouterr().out
    assert "auto" in out and "streams" in out
    trace = tmp_path / "resnet50.trace.json"
    assert trace.exists() and '"traceEvents"' in trace.read_text()[:200]
