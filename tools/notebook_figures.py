"""Runs notebooks top to bottom and saves the pictures they draw (for docs/gallery.md).

    python tools/notebook_figures.py notebooks/04_reversal_attention.ipynb [more.ipynb ...]
        [--profile full] [--out docs/figures/lectures] [--timeout 3600] [--executed DIR]

Each notebook runs in a fresh kernel from its own folder, with `COURSE_PROFILE`
set, as a student would run it. Every PNG it displays is written as
`<notebook stem>-<cell id>.png` (`-2`, `-3` ... for a cell's further pictures),
after the notebook's earlier pictures in that folder are removed, so a plot taken
out of a notebook does not linger. `figures.json` in the same folder records, per
notebook, the profile, the date, the commit (`+changes` when the notebook
differed from it), the seconds it took and each picture's cell with the first
line of its code.

A notebook that fails leaves its earlier pictures as they were; the command
names the cell, goes on with the next notebook and exits with status 1.
"""

import argparse
import base64
import datetime
import json
import os
import subprocess
import sys
import time
from pathlib import Path

import nbformat
from nbclient import NotebookClient
from nbclient.exceptions import CellControlSignal, DeadKernelError

ROOT = Path(__file__).resolve().parents[1]
INDEX_FILE = "figures.json"


def pictures(notebook):
    """Yields `(cell, picture_number, png_bytes)` for every PNG output of an executed notebook."""
    for cell in notebook.cells:
        if cell.cell_type != "code":
            continue
        number = 0
        for output in cell.get("outputs", []):
            data = output.get("data", {})
            if "image/png" in data:
                number += 1
                yield cell, number, base64.b64decode(data["image/png"])


def picture_name(stem, cell, number):
    return f"{stem}-{cell['id']}.png" if number == 1 else f"{stem}-{cell['id']}-{number}.png"


def kernel_environment(profile):
    """The kernel's environment: this process's, with the profile set and the plotting backend left to the
    kernel (a `MPLBACKEND=Agg` from a test run or a shell would stop every picture)."""
    environment = {name: value for name, value in os.environ.items() if name != "MPLBACKEND"}
    return {**environment, "COURSE_PROFILE": profile}


def execute(path, profile, timeout):
    """Runs the notebook at `path` in a fresh kernel and returns it with its outputs."""
    notebook = nbformat.read(path, as_version=4)
    NotebookClient(notebook, timeout=timeout, kernel_name="python3",
                   resources={"metadata": {"path": str(path.parent)}}).execute(env=kernel_environment(profile))
    return notebook


def commit(path):
    """The commit the notebook at `path` was run at, `+changes` when it differs from that commit; "unknown" outside git."""
    def git(*arguments):
        return subprocess.run(["git", "-C", str(path.parent), *arguments], capture_output=True, text=True).stdout.strip()

    revision = git("rev-parse", "--short", "HEAD")
    if not revision:
        return "unknown"
    return revision + ("+changes" if git("status", "--porcelain", "--", path.name) else "")


def save(notebook, path, out, seconds, profile):
    """Writes the notebook's pictures to `out` (its earlier ones removed) and returns their index entry."""
    stem = path.stem
    for old in out.glob(f"{stem}-*.png"):
        old.unlink()
    entries = []
    for cell, number, png in pictures(notebook):
        name = picture_name(stem, cell, number)
        (out / name).write_bytes(png)
        first_line = next((line for line in cell.source.splitlines() if line.strip()), "")
        entries.append({"file": name, "cell": cell["id"], "code": first_line})
    return {"profile": profile, "date": datetime.date.today().isoformat(), "commit": commit(path),
            "seconds": round(seconds, 1), "pictures": entries}


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("notebooks", nargs="+", type=Path)
    parser.add_argument("--profile", default="full", choices=["fast", "full"])
    parser.add_argument("--out", type=Path, default=ROOT / "docs" / "figures" / "lectures")
    parser.add_argument("--timeout", type=int, default=3600, help="seconds allowed for one cell")
    parser.add_argument("--executed", type=Path, help="also keep each executed notebook, with its outputs, in this folder")
    args = parser.parse_args(argv)
    missing = [str(path) for path in args.notebooks if path.suffix != ".ipynb" or not path.is_file()]
    if missing:
        parser.error(f"each notebook must be an existing .ipynb file. Received: {', '.join(missing)}")
    args.out.mkdir(parents=True, exist_ok=True)
    index_path = args.out / INDEX_FILE
    index = json.loads(index_path.read_text()) if index_path.exists() else {}
    failed = []
    for path in args.notebooks:
        path = path.resolve()
        print(f"running {path.name} ({args.profile} profile) ...", flush=True)
        started = time.perf_counter()
        try:
            notebook = execute(path, args.profile, args.timeout)
        except (CellControlSignal, DeadKernelError) as error:  # a cell's error or timeout, a dead kernel
            failed.append(path.name)
            print(f"{path.name} failed; its pictures are left as they were:\n{str(error)[-2000:]}", file=sys.stderr)
            continue
        if args.executed:
            args.executed.mkdir(parents=True, exist_ok=True)
            nbformat.write(notebook, args.executed / path.name)
        index[path.stem] = save(notebook, path, args.out, time.perf_counter() - started, args.profile)
        index_path.write_text(json.dumps(dict(sorted(index.items())), indent=1, ensure_ascii=False) + "\n")
        print(f"  {len(index[path.stem]['pictures'])} pictures in {index[path.stem]['seconds']} s -> {args.out}")
    if failed:
        print(f"failed: {', '.join(failed)}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
