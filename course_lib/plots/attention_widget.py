"""Attention by hand: drag five scores, watch the weights and the context move.

The toy translation is the lecture's "Main ghar ja raha hoon" -> "I am going
home". For one decoder step `t` the student sets the five scores `e_jt`; the
explorer shows

* the weights `alpha_jt = softmax_j(e_jt)` as bars, next to the oracle's,
* the context vector `c_t = sum_j alpha_jt h_j` among five 2-D encoder states
  (real states have hundreds of dimensions; two are enough to see that `c_t`
  always lies inside the states' convex hull),
* the heat map of all four steps (a soft alignment),
* the squared error `||alpha - alpha_oracle||^2`, the loss we could train on
  if someone gave us true weights.

`show_attention_explorer()` builds the ipywidgets version when a widget front
end can show it, and otherwise draws the same picture once as a static
matplotlib figure (plain Python, CI, nbval with the Agg backend). The default
scores and the 2-D states are made up to look like a trained model.
"""

import os

import numpy as np

from course_lib.plots.attention import attention_heatmap

SOURCE_WORDS = ("Main", "ghar", "ja", "raha", "hoon")
TARGET_WORDS = ("I", "am", "going", "home")

# Which input words a person looks at to write each output word (the oracle).
ORACLE_WEIGHTS = np.array(
    [
        [1.0, 0.0, 0.0, 0.0, 0.0],  # I     <- Main
        [0.0, 0.0, 0.0, 0.0, 1.0],  # am    <- hoon
        [0.0, 0.0, 0.5, 0.5, 0.0],  # going <- ja raha
        [0.0, 1.0, 0.0, 0.0, 0.0],  # home  <- ghar
    ]
)

# Synthetic scores e_jt, shaped like those of a trained model (rows: steps t).
DEFAULT_SCORES = np.array(
    [
        [2.1, -0.3, 0.4, -0.2, 0.6],
        [0.5, -0.1, -0.6, 0.2, 2.4],
        [0.1, -0.7, 2.0, 2.2, -0.3],
        [-0.4, 2.3, 0.5, -0.2, 0.3],
    ]
)

# Five toy 2-D encoder states h_j, one per source word.
ENCODER_STATES = np.array([[-1.6, 1.1], [1.3, 1.5], [1.7, -0.3], [0.9, -1.3], [-1.1, -1.4]])

SCORE_RANGE = (-4.0, 4.0)


def softmax(scores, axis=-1):
    """`exp(e_j) / sum_j' exp(e_j')`, computed stably (the max is subtracted first)."""
    scores = np.asarray(scores, dtype=float)
    shifted = scores - scores.max(axis=axis, keepdims=True)
    exponentials = np.exp(shifted)
    return exponentials / exponentials.sum(axis=axis, keepdims=True)


def context_vector(weights, states):
    """`c_t = sum_j alpha_jt h_j`: weights `(..., T)`, states `(T, d)` -> `(..., d)`."""
    weights, states = np.asarray(weights, float), np.asarray(states, float)
    if weights.shape[-1] != states.shape[0]:
        raise ValueError(
            "Need one weight per encoder state. "
            f"Received: weights.shape={weights.shape}, states.shape={states.shape}"
        )
    return weights @ states


def squared_error(weights, oracle):
    """`sum_j (alpha_j - alpha_oracle_j)^2` (per row for 2-D input)."""
    weights, oracle = np.asarray(weights, float), np.asarray(oracle, float)
    if weights.shape != oracle.shape:
        raise ValueError(
            f"weights and oracle must have the same shape. Received: {weights.shape} and {oracle.shape}"
        )
    return np.sum((weights - oracle) ** 2, axis=-1)


def oracle_scores(oracle_row, peak=6.0):
    """Scores whose softmax comes close to an oracle row (the "oracle" button).

    The oracle puts exact zeros on some words, which no finite score can give;
    `log(alpha)` clipped at `-peak` gets within `exp(-peak)`.
    """
    oracle_row = np.asarray(oracle_row, float)
    with np.errstate(divide="ignore"):
        scores = np.log(oracle_row)
    return np.clip(scores - scores.max(), -peak, 0.0) + peak / 2


class AttentionExplorer:
    """The state behind the widget: a `(4, 5)` table of scores and a chosen step.

    Everything is plain NumPy, so the same object feeds the static figure,
    the widget and the tests.
    """

    def __init__(self, scores=None, step=2, states=None, oracle=None):
        self.scores = np.array(DEFAULT_SCORES if scores is None else scores, dtype=float)
        self.states = np.array(ENCODER_STATES if states is None else states, dtype=float)
        self.oracle = np.array(ORACLE_WEIGHTS if oracle is None else oracle, dtype=float)
        if self.scores.shape != self.oracle.shape or self.states.shape != (self.scores.shape[1], 2):
            raise ValueError(
                "Need scores (steps, T), oracle (steps, T) and 2-D states (T, 2). Received: "
                f"scores.shape={self.scores.shape}, oracle.shape={self.oracle.shape}, states.shape={self.states.shape}"
            )
        self.select_step(step)

    @property
    def num_steps(self):
        return self.scores.shape[0]

    def select_step(self, step):
        if not 0 <= int(step) < self.num_steps:
            raise ValueError(f"`step` must lie in 0..{self.num_steps - 1}. Received: step={step}")
        self.step = int(step)

    def set_score(self, position, value):
        """Sets `e_jt` for the chosen step `t` and input position `j`."""
        self.scores[self.step, int(position)] = float(value)

    def use_oracle(self):
        """Replaces the chosen step's scores by ones that reproduce the oracle."""
        self.scores[self.step] = oracle_scores(self.oracle[self.step])

    def shift_scores(self, constant=1.0):
        """Adds the same constant to every score of the chosen step; returns it.

        The weights do not move (section 4 of the lecture notebook). The
        sliders stop at `SCORE_RANGE`, so when `+constant` would push the
        largest score past the top, the whole row moves down until its
        smallest score sits at the bottom instead. Every score still moves by
        the same amount; no score is clipped on its own.
        """
        row = self.scores[self.step]
        if row.max() + constant > SCORE_RANGE[1]:
            constant = SCORE_RANGE[0] - row.min()
        self.scores[self.step] = row + constant
        return constant

    @property
    def weights(self):
        """`alpha` for every step: `(steps, T)`."""
        return softmax(self.scores)

    def readouts(self):
        """The numbers the widget prints for the chosen step."""
        weights = self.weights[self.step]
        return {
            "step": self.step,
            "word": TARGET_WORDS[self.step] if self.num_steps == len(TARGET_WORDS) else str(self.step),
            "weights": weights,
            # Every source word (or position) that ties for the largest weight.
            "largest": tuple(
                SOURCE_WORDS[j] if len(weights) == len(SOURCE_WORDS) else int(j)
                for j in np.flatnonzero(weights >= weights.max() - 1e-9)
            ),
            "weight_sum": float(weights.sum()),
            "context": context_vector(weights, self.states),
            "error": float(squared_error(weights, self.oracle[self.step])),
        }

    def summary(self):
        r = self.readouts()
        return (
            f"t = {r['step'] + 1} ({r['word']}): largest alpha on {' and '.join(map(repr, r['largest']))}, "
            f"sum alpha = {r['weight_sum']:.3f}, c_t = ({r['context'][0]:+.2f}, {r['context'][1]:+.2f}), "
            f"||alpha - alpha_oracle||^2 = {r['error']:.3f}"
        )

    # -- pictures -----------------------------------------------------------------

    def figure(self):
        """A matplotlib figure with bars, the 2-D context, the heat map and the error."""
        import matplotlib.pyplot as plt

        figure, (bars, plane, heat) = plt.subplots(1, 3, figsize=(13, 3.9), gridspec_kw={"width_ratios": [1.1, 1, 1.2]})
        self.draw(bars, plane, heat)
        figure.suptitle(self.summary(), fontsize=9, y=0.02, va="bottom")
        figure.tight_layout(rect=(0, 0.07, 1, 1))
        return figure

    def draw(self, bars, plane, heat):
        from matplotlib.patches import Rectangle

        r = self.readouts()
        positions = np.arange(len(r["weights"]))
        bars.bar(positions, r["weights"], color="tab:blue", label="alpha (softmax of scores)")
        # black, not red: a red outline on the blue bars vanishes in grey (contrast 1.04:1)
        bars.bar(positions, self.oracle[self.step], fill=False, edgecolor="black", linestyle="--", label="oracle")
        for j, (weight, score, oracle) in enumerate(zip(r["weights"], self.scores[self.step], self.oracle[self.step])):
            # above the taller of the bar and the oracle's dashed outline, which would otherwise strike it through
            bars.text(j, max(weight, oracle) + 0.02, f"{weight:.2f}\ne={score:+.2f}", ha="center", fontsize=8)
        bars.set_xticks(positions, SOURCE_WORDS[: len(positions)])
        bars.set_ylim(0, 1.5)  # room above the tallest bar's label for the legend
        bars.set_yticks(np.linspace(0.0, 1.0, 6))  # a weight is at most 1: no ticks in the legend's room
        bars.set_xlabel("input word j")
        bars.set_ylabel("weight alpha_jt")
        bars.set_title(f"weights at t = {r['step'] + 1} ({r['word']})", fontsize=10)
        bars.legend(fontsize=8, loc="upper center", ncol=2)

        plane.scatter(self.states[:, 0], self.states[:, 1], s=40 + 400 * r["weights"], color="tab:blue", alpha=0.6)
        for j, (x, y) in enumerate(self.states):
            plane.annotate(f"h_{j + 1} {SOURCE_WORDS[j] if j < len(SOURCE_WORDS) else ''}", (x, y), fontsize=8,
                           xytext=(7, 7), textcoords="offset points")  # clear of the dot, which grows with alpha
        outline = np.vstack([self.states, self.states[:1]])  # (T + 1, 2), the default states in convex order
        plane.plot(outline[:, 0], outline[:, 1], color="0.8", linewidth=0.8)
        context = r["context"]
        plane.scatter([context[0]], [context[1]], marker="*", s=250, color="tab:orange", zorder=3, label="c_t")
        oracle_context = context_vector(self.oracle[self.step], self.states)
        plane.scatter([oracle_context[0]], [oracle_context[1]], marker="x", s=80, color="tab:red", zorder=3,
                      label="oracle c_t")
        plane.set_aspect("equal")
        plane.margins(x=0.3, y=0.15)  # room for the labels "h_j word" beside the outermost states
        plane.set_xlabel("state coordinate 1 (toy 2-D states)")
        plane.set_ylabel("state coordinate 2")
        plane.set_title("context vector among the encoder states", fontsize=10)
        # Below the panel, not inside: c_t moves about the polygon, and a legend placed "best" jumped with the
        # sliders and could cover a state's label.
        plane.legend(fontsize=7, loc="upper center", bbox_to_anchor=(0.5, -0.2), ncol=2, frameon=False)

        attention_heatmap(self.weights, SOURCE_WORDS[: self.scores.shape[1]], TARGET_WORDS[: self.num_steps], ax=heat)
        # Every row comes from the scores held for its step: the made-up DEFAULT_SCORES until someone changes them.
        heat.text(0.5, -0.04, "every row: softmax of that step's scores (preset until you change them)",
                  transform=heat.transAxes, ha="center", va="top", fontsize=8)
        heat.add_patch(
            Rectangle((-0.5, self.step - 0.5), self.scores.shape[1], 1, fill=False, edgecolor="black", linewidth=2.5)
        )

    def widget(self):
        """The interactive version: five score sliders, a step picker and an oracle button."""
        import ipywidgets as widgets
        import matplotlib.pyplot as plt
        from IPython.display import display

        _enable_colab_widgets()
        output = widgets.Output()
        readout = widgets.HTML()
        sliders = [
            widgets.FloatSlider(value=float(self.scores[self.step, j]), min=SCORE_RANGE[0], max=SCORE_RANGE[1],
                                step=0.05, description=f"e({word})", continuous_update=False)
            for j, word in enumerate(SOURCE_WORDS[: self.scores.shape[1]])
        ]
        step_picker = widgets.Dropdown(
            options=[(f"t = {t + 1}: {word}", t) for t, word in enumerate(TARGET_WORDS[: self.num_steps])],
            value=self.step, description="step",
        )
        oracle_button = widgets.Button(description="Oracle weights")
        add_button = widgets.Button(description="Add a constant to all scores")
        syncing = {"active": False}

        def redraw():
            readout.value = f"<code>{self.summary()}</code>"
            with output:
                output.clear_output(wait=True)
                figure = self.figure()
                display(figure)
                plt.close(figure)

        def sync_sliders():
            syncing["active"] = True
            for j, slider in enumerate(sliders):
                slider.value = float(np.clip(self.scores[self.step, j], *SCORE_RANGE))
            syncing["active"] = False

        def on_slide(change, position):
            if not syncing["active"]:
                self.set_score(position, change["new"])
                redraw()

        def on_step(change):
            self.select_step(change["new"])
            sync_sliders()
            redraw()

        def on_oracle(_):
            self.use_oracle()
            sync_sliders()
            redraw()

        def on_add(_):
            self.shift_scores(1.0)
            sync_sliders()
            redraw()

        for j, slider in enumerate(sliders):
            slider.observe(lambda change, j=j: on_slide(change, j), names="value")
        step_picker.observe(on_step, names="value")
        oracle_button.on_click(on_oracle)
        add_button.on_click(on_add)
        redraw()
        box = widgets.VBox(
            [widgets.HBox([step_picker, oracle_button, add_button]), widgets.HBox([widgets.VBox(sliders), readout]), output]
        )
        box.explorer, box.sliders, box.step_picker = self, sliders, step_picker
        box.oracle_button, box.add_button = oracle_button, add_button
        return box


def _enable_colab_widgets():
    """Colab renders ipywidgets 8 only after its custom widget manager is enabled."""
    try:
        from google.colab import output as colab_output
    except ImportError:
        return False
    colab_output.enable_custom_widget_manager()
    return True


def widget_front_end_available():
    """True inside a Jupyter/Colab kernel that draws inline, with ipywidgets installed.

    Plain Python, and kernels run with a non-interactive backend such as Agg
    (CI, `pytest --nbval`), get the static figure instead. Set the environment
    variable `COURSE_STATIC_PLOTS=1` to force the static version.
    """
    if os.environ.get("COURSE_STATIC_PLOTS", "").strip() not in ("", "0"):
        return False
    try:
        import ipywidgets  # noqa: F401
        from IPython import get_ipython
    except ImportError:
        return False
    shell = get_ipython()
    if shell is None or type(shell).__name__ not in ("ZMQInteractiveShell", "Shell"):
        return False
    import matplotlib

    backend = matplotlib.get_backend().lower()
    return "inline" in backend or "ipympl" in backend or "widget" in backend


def show_attention_explorer(explorer=None, mode="auto", display=True):
    """Shows the explorer: the widget where a front end exists, else a static figure.

    Args:
        explorer: an `AttentionExplorer` (a default one when None).
        mode: "auto", "widget" or "static".
        display: show the result now (IPython `display` for the widget,
            `plt.show()` for the figure); it is returned either way. A
            figure shown is then closed, so a script that calls this in a
            loop does not pile up open figures; it can still be saved.

    Returns:
        The ipywidgets box (widget mode) or the matplotlib figure (static mode).
    """
    if mode not in ("auto", "widget", "static"):
        raise ValueError(f"`mode` must be 'auto', 'widget' or 'static'. Received: mode={mode!r}")
    explorer = explorer or AttentionExplorer()
    if mode == "widget" or (mode == "auto" and widget_front_end_available()):
        box = explorer.widget()
        if display:
            from IPython.display import display as show

            show(box)
        return box
    figure = explorer.figure()
    print(explorer.summary())
    if display:
        import matplotlib.pyplot as plt

        plt.show()
        plt.close(figure)
    return figure
