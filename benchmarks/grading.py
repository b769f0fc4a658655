"""Grading benchmark: 30 submissions of A1, faults among them, two workers.

    python benchmarks/grading.py [--jobs 2] [--count 30]

Target (issue: graded assignments): under 5 minutes on a 2-core CPU with the
assignment's default limits (30 s per cell). Prints the wall time, the time
per submission, and each fault's score and first reason.
"""

import argparse
import csv
import tempfile
import time
from pathlib import Path

from course_lib.grading import faults, grader
from course_lib.grading.spec import REPOSITORY_ROOT
from course_lib.tasks.arguments import positive_int

SOLUTION = REPOSITORY_ROOT / "solutions" / "A1_bahdanau_attention.ipynb"
STUDENT = REPOSITORY_ROOT / "assignments" / "A1_bahdanau_attention.ipynb"


def build_batch(folder, count, targets):
    """`count` submissions: every fault and wrong part once, the rest correct or untouched."""
    paths = []
    for name in faults.names("A1"):
        path = folder / f"{name}.ipynb"
        path.write_text(faults.make("A1", name, SOLUTION, targets))
        paths.append(path)
    index = 0
    while len(paths) < count:
        source = STUDENT if index % 4 == 3 else SOLUTION
        path = folder / f"student-{index:02d}.ipynb"
        path.write_bytes(source.read_bytes())
        paths.append(path)
        index += 1
    return paths[:count]


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--jobs", type=positive_int, default=2)
    parser.add_argument("--count", type=positive_int, default=30,
                        help=f"submissions to grade: the {len(faults.names('A1'))} faulty ones first (a smaller "
                             "count keeps the first ones only), then correct and untouched copies")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as temporary:
        folder = Path(temporary)
        (folder / "in").mkdir()
        targets = {"csv": str(folder / "grades.csv"), "feedback": str(folder / "feedback")}
        paths = build_batch(folder / "in", args.count, targets)
        started = time.monotonic()
        results = grader.grade("A1", paths, out=folder / "grades.csv", feedback_dir=folder / "feedback", jobs=args.jobs)
        seconds = time.monotonic() - started
        rows = list(csv.DictReader((folder / "grades.csv").open()))
    print(f"\n{len(results)} submissions of A1, --jobs {args.jobs}: {seconds:.1f} s "
          f"({seconds / len(results):.1f} s per submission; target < 300 s)")
    print(f"CSV rows: {len(rows)}")
    print(f"{'submission':22s} {'total':>5s}  first note")
    for result in results:
        note = result.notes[0] if result.notes else next((t.reason for t in result.tests if t.reason), "")
        print(f"{result.name:22s} {result.total:5g}  {note[:90]}")


if __name__ == "__main__":
    main()
