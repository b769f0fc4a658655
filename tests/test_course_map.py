"""The course map: up to date with its generator, links that lead somewhere."""

import importlib.util
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
spec = importlib.util.spec_from_file_location("course_map", ROOT / "tools" / "course_map.py")
course_map = importlib.util.module_from_spec(spec)
spec.loader.exec_module(course_map)


def test_document_is_up_to_date():
    assert (ROOT / "docs" / "course_map.md").read_text() == course_map.render(), (
        "docs/course_map.md differs from tools/course_map.py: run python tools/course_map.py"
    )


@pytest.mark.parametrize("entry", course_map.ENTRIES, ids=lambda e: e.path)
def test_links_point_to_existing_files(entry):
    if not (ROOT / entry.path).exists():
        pytest.skip(f"{entry.path} is planned but not written yet")
    text = course_map.render()
    relative = re.findall(r"\]\(\.\./([^)]+)\)", text)
    assert entry.path in relative
    owner, name, branch = course_map.repository()
    url = course_map.colab_url(entry.path)
    assert url == f"https://colab.research.google.com/github/{owner}/{name}/blob/{branch}/{entry.path}"
    assert url in text


def test_every_notebook_is_on_the_map():
    listed = {entry.path for entry in course_map.ENTRIES}
    existing = {str(p.relative_to(ROOT)) for folder in ("notebooks", "assignments") for p in (ROOT / folder).glob("*.ipynb")}
    assert existing <= listed, f"add to tools/course_map.py ENTRIES: {sorted(existing - listed)}"


def test_colab_links_follow_course_toml(tmp_path):
    (tmp_path / "course.toml").write_text('repository = "https://github.com/someone/fork.git"\nbranch = "dev"\n')
    assert course_map.colab_url("notebooks/x.ipynb", tmp_path) == (
        "https://colab.research.google.com/github/someone/fork/blob/dev/notebooks/x.ipynb"
    )
    (tmp_path / "course.toml").write_text('repository = "not a url"\n')
    with pytest.raises(ValueError, match="github.com"):
        course_map.repository(tmp_path)
