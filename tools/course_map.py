"""Writes `docs/course_map.md`, the notebooks' set-up cells and their Colab runtimes.

    python tools/course_map.py           # rewrite docs/course_map.md, stale set-up cells and runtimes
    python tools/course_map.py --check   # exit 1 if any of them is out of date

Everything comes from the one list `ENTRIES` below (edit it, then rerun), and
the "Open in Colab" links from the repository URL and branch in `course.toml`:
`https://colab.research.google.com/github/<owner>/<repo>/blob/<branch>/<path>`.
The first code cell of every notebook in `notebooks/`, `solutions/` and
`assignments/` (the Colab set-up cell, which pip-installs `course_lib` from
that repository) is rewritten too, where it differs, and so is the runtime
Colab opens a notebook on: a GPU where its entry says `colab_gpu=True` (the
notebooks that train models in the full profile; for an assignment, its
solution as well), Colab's default CPU runtime otherwise. Nothing else in a
notebook changes. Fork the course, change `course.toml`, rerun, and every link
and every install follows (`course_lib/course_repository.py` reads the file).

Times: "fast" is `COURSE_PROFILE=fast` on a CPU (what CI runs); "full" the
default profile, on a 2-core CPU (what a Colab runtime without a GPU has) and
on a Colab GPU. A time is only written once someone measured it; "not
measured" says so.
"""

import argparse
import sys
from dataclasses import dataclass
from pathlib import Path

from course_lib import course_repository

ROOT = Path(__file__).resolve().parents[1]
DOCUMENT = ROOT / "docs" / "course_map.md"
NOT_MEASURED = "not measured"


@dataclass(frozen=True)
class Entry:
    kind: str  # "lecture" or "assignment"
    path: str  # relative to the repository root
    title: str
    teaches: str
    fast_cpu: str = NOT_MEASURED
    full_cpu: str = NOT_MEASURED
    full_gpu: str = NOT_MEASURED
    colab_gpu: bool = False  # Colab opens it on a GPU runtime (it trains models in the full profile)


ENTRIES = [
    Entry("lecture", "notebooks/01_language_model.ipynb", "An RNN language model",
          "the five ingredients; RNN vs GRU vs LSTM; teacher forcing; greedy and temperature generation from `<GO>` to `<stop>`; "
          "perplexity against a unigram baseline and the grammar's exact floor; the learned s_0",
          fast_cpu="19 s", full_cpu="10 min", colab_gpu=True),
    Entry("lecture", "notebooks/02_encoder_decoder_recipe.ipynb", "One recipe, many applications",
          "data, encoder, decoder, parameters, loss for captioning, entailment, translation, transliteration, image QA, "
          "summarization, video captioning and classification (RNN of CNNs), dialog; parameter formulas; options 1 and 2",
          fast_cpu="7 s", full_cpu="8 s"),
    Entry("lecture", "notebooks/03_attention_by_hand.ipynb", "Attention by hand",
          "the oracle table; weighted average vs concatenation; scores, softmax, squared error against the oracle; "
          "shift invariance; interactive explorer", fast_cpu="3 s", full_cpu="2 s"),
    Entry("lecture", "notebooks/04_reversal_attention.ipynb", "Attention on the reversal task",
          "Bahdanau attention in a Seq2Seq model; plain vs attentional decoder; learned alignments as heat maps",
          fast_cpu="36 s", full_cpu="2.1 min", colab_gpu=True),
    Entry("lecture", "notebooks/05_translation.ipynb", "Translation with attention",
          "Hindi <-> English translation; BLEU; heat map of 'I am going home'; "
          "learned vs oracle-supervised attention",
          fast_cpu="38 s", full_cpu="1.9 min", colab_gpu=True),
    Entry("lecture", "notebooks/06_transliteration.ipynb", "Transliteration",
          "character-level encoder-decoder, Roman -> Devanagari; words typed without vowel length, so top-1 has a "
          "ceiling; top-k accuracy; right-to-left reranking",
          fast_cpu="38 s", full_cpu="14 min", colab_gpu=True),
    Entry("lecture", "notebooks/07_captioning.ipynb", "Captioning with attention over image locations",
          "CNN feature maps as locations; attention over them; where the model looks for each word; what the "
          "misses are about; locations that know where they are",
          fast_cpu="49 s", full_cpu="7.9 min", colab_gpu=True),
    Entry("lecture", "notebooks/08_hierarchical_attention.ipynb", "Hierarchical attention",
          "documents and dialogs as sequences of sequences; word and sentence attention (u_w, u_s)",
          fast_cpu="48 s (scaled)", full_cpu="2.5 min", colab_gpu=True),
    Entry("lecture", "notebooks/09_self_test.ipynb", "Self-test",
          "the lecture's eight questions, each answered by code (parameter counts, softmax, gradients, 196 locations)",
          fast_cpu="7 s", full_cpu="6 s"),
    Entry("assignment", "assignments/A1_bahdanau_attention.ipynb", "A1 · Bahdanau attention",
          "implement e_jt, alpha_jt and c_t from the equations, with masking",
          fast_cpu="5 s (solution)", full_cpu="4 s (solution)"),
    Entry("assignment", "assignments/A2_attentional_decoder.ipynb", "A2 · The attentional decoder",
          "one decoder step with attention; teacher forcing; attention against the plain model across lengths",
          fast_cpu="20 s (solution)", full_cpu="1.6 min (solution)", colab_gpu=True),
    Entry("assignment", "assignments/A3_transliteration.ipynb", "A3 · Transliteration",
          "train and evaluate a character-level model with attention",
          fast_cpu="18 s (solution)", full_cpu="14 min (solution)", colab_gpu=True),
    Entry("assignment", "assignments/A4_captioning_attention.ipynb", "A4 · Captioning with attention",
          "attention over a CNN feature map; caption generation",
          fast_cpu="13 s (solution)", full_cpu="1.5 min (solution)", colab_gpu=True),
    Entry("assignment", "assignments/A5_hierarchical_attention.ipynb", "A5 · Hierarchical attention",
          "word- and sentence-level attention for document classification",
          fast_cpu="14 s (solution)", full_cpu="44 s (solution)", colab_gpu=True),
    Entry("assignment", "assignments/Q_self_test_quiz.ipynb", "Q · Self-test quiz",
          "the eight self-test questions, auto-graded",
          fast_cpu="2 s (solution)", full_cpu="1 s (solution)"),
]


def repository(root=ROOT):
    """`(owner, name, branch)` from `course.toml`."""
    found = course_repository.read(root)
    return found.owner, found.name, found.branch


def colab_url(path, root=ROOT):
    return course_repository.colab_url(path, root)


def colab_runtimes(entries=ENTRIES, root=ROOT):
    """`{notebook path: whether Colab opens it on a GPU}`: each entry's notebook, and an assignment's solution."""
    runtimes = {}
    for entry in entries:
        runtimes[Path(root) / entry.path] = entry.colab_gpu
        if entry.kind == "assignment":
            runtimes[Path(root) / "solutions" / Path(entry.path).name] = entry.colab_gpu
    return {path: gpu for path, gpu in runtimes.items() if path.exists()}


def render(entries=ENTRIES, root=ROOT):
    """The markdown text of the course map."""
    lines = [
        "# Course map",
        "",
        "<!-- Generated by tools/course_map.py from its ENTRIES list and course.toml; do not edit by hand. -->",
        "",
        "The lectures in order, then the assignments. *Fast* is the `COURSE_PROFILE=fast` run on a CPU (what CI runs);",
        "*full* is the default profile. Both CPU columns come from one otherwise idle 2-core CPU, an Intel Xeon with AVX-512",
        "(4 Dec 2026), except lecture 7's two times (an idle 2-core AMD EPYC with AVX-512, 5 Dec 2026, after the lecture",
        "gained its fourth training) and lecture 8's fast time (scaled, below); for an assignment, from its complete",
        "solution notebook. A fast time is the wall time of",
        "`pytest --nbval-lax` on the one notebook, a full time that of one top-to-bottom run of it (nbclient); both include",
        "starting the kernel. A Colab runtime without a GPU has 2 cores as well, often slower ones: expect longer runs there.",
        "On a slower 2-core AMD EPYC the full runs took up to about twice as long (lecture 1: 19.5 min, lecture 6: 30.4 min;",
        "`docs/gallery.md`'s `figures.json`): on a CPU, plan for up to half an hour for the longest lectures.",
        "\"not measured\" means nobody has timed it yet. Rerun `python tools/course_map.py` after editing the list.",
        "A notebook marked GPU in the Colab column trains models in the full profile: its link opens it on a GPU runtime",
        "(a T4, asked for in the notebook's metadata). When Colab has no GPU to give, \"Connect without GPU\" runs it on the",
        "CPU instead; the 2-core CPU column says how long that takes.",
        "Lecture 8's fast time is scaled: its dialog model went from 12 to 18 epochs later on 4 Dec, timed on another",
        "idle 2-core CPU (AMD EPYC, AVX2) at 70.9 s before and 75.3 s after; 45 s x 75.3 / 70.9 = 48 s.",
        "",
    ]
    repository = course_repository.read(root)  # once, not once per link
    for kind, heading in (("lecture", "Lectures"), ("assignment", "Assignments")):
        lines += [f"## {heading}", "", "| # | notebook | Colab | what it teaches | fast (CPU) | full (2-core CPU) | full (GPU) |",
                  "|---|---|---|---|---|---|---|"]
        for number, entry in enumerate((e for e in entries if e.kind == kind), start=1):
            link = f"[{entry.title}](../{entry.path})"
            badge = f"[![Open in Colab](https://colab.research.google.com/assets/colab-badge.svg)]({repository.colab_url(entry.path)})"
            badge += " GPU" if entry.colab_gpu else ""
            lines.append(f"| {number} | {link} | {badge} | {entry.teaches} | {entry.fast_cpu} | {entry.full_cpu} | {entry.full_gpu} |")
        lines.append("")
    return "\n".join(lines)


def main(argv=None, root=ROOT):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true",
                        help="change nothing; exit 1 if the map, a set-up cell or a Colab runtime is out of date")
    args = parser.parse_args(sys.argv[1:] if argv is None else argv)
    document = Path(root) / "docs" / "course_map.md"
    text = render(root=root)
    notebooks = course_repository.notebooks_with_setup_cells(root)
    if args.check:
        status = 0
        current = document.read_text() if document.exists() else ""
        if current != text:
            print(f"{document} is out of date: run python tools/course_map.py", file=sys.stderr)
            status = 1
        for path in course_repository.stale_setup_cells(notebooks, root):
            print(f"{path}: its set-up cell does not install {course_repository.install_target(root)} "
                  "(course.toml): run python tools/course_map.py", file=sys.stderr)
            status = 1
        for path in course_repository.stale_colab_runtimes(colab_runtimes(root=root)):
            print(f"{path}: its metadata asks Colab for another runtime than tools/course_map.py lists: "
                  "run python tools/course_map.py", file=sys.stderr)
            status = 1
        return status
    document.parent.mkdir(exist_ok=True)
    if not document.exists() or document.read_text() != text:
        document.write_text(text)
        print("wrote", document)
    else:
        print("up to date:", document)
    for path in course_repository.refresh_setup_cells(notebooks, root):
        print("rewrote the set-up cell of", path)
    for path in course_repository.refresh_colab_runtimes(colab_runtimes(root=root)):
        print("rewrote the Colab runtime of", path)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
