"""Starts a program under resource limits (used to launch grading kernels).

    python -m course_lib.grading.sandbox --memory-mb 4096 --file-mb 64 -- python -m ipykernel_launcher -f conn.json

The limits are set with `resource.setrlimit` in this process, which then
replaces itself with the program, so the kernel and anything it starts
inherit them:

* address space (`RLIMIT_AS`): a notebook that fills memory gets a
  `MemoryError` (or its kernel dies) instead of taking the machine down.
  The limit is per process: each process the kernel starts gets the whole
  of it again, and nothing limits their sum (that would take a cgroup);
* size of any file written (`RLIMIT_FSIZE`): writing a huge file fails with
  `OSError` (Python ignores `SIGXFSZ`);
* no core dumps.
"""

import argparse
import os
import resource


def apply_limits(memory_mb, file_mb):
    megabyte = 2**20
    if memory_mb:
        resource.setrlimit(resource.RLIMIT_AS, (memory_mb * megabyte, memory_mb * megabyte))
    if file_mb:
        resource.setrlimit(resource.RLIMIT_FSIZE, (file_mb * megabyte, file_mb * megabyte))
    resource.setrlimit(resource.RLIMIT_CORE, (0, 0))


def main(argv=None):
    parser = argparse.ArgumentParser(prog="python -m course_lib.grading.sandbox")
    parser.add_argument("--memory-mb", type=int, default=0)
    parser.add_argument("--file-mb", type=int, default=0)
    parser.add_argument("program", nargs=argparse.REMAINDER)
    args = parser.parse_args(argv)
    program = args.program[1:] if args.program[:1] == ["--"] else args.program
    if not program:
        parser.error("no program given after --")
    apply_limits(args.memory_mb, args.file_mb)
    os.execvp(program[0], program)


if __name__ == "__main__":
    main()
