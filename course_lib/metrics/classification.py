"""Classification metrics: accuracy, macro-F1, confusion matrix, planted-sentence top-1."""

import numpy as np

from course_lib.metrics.ties import check_positions, tied_argmax_credit


def _labels(y_true, y_pred):
    y_true, y_pred = np.asarray(y_true), np.asarray(y_pred)
    if y_true.shape != y_pred.shape or y_true.ndim != 1:
        raise ValueError(
            "`y_true` and `y_pred` must be 1-D arrays of the same length. "
            f"Received: y_true.shape={y_true.shape}, y_pred.shape={y_pred.shape}"
        )
    if y_true.size == 0:
        raise ValueError("Cannot score an empty set of predictions. Received: 0 labels")
    for name, labels in (("y_true", y_true), ("y_pred", y_pred)):
        if labels.dtype.kind not in "iub" and not (
            labels.dtype.kind == "f" and np.isfinite(labels).all() and (labels == np.round(labels)).all()
        ):
            raise ValueError(
                f"`{name}` must hold integer class labels (take the arg-max of probabilities first). "
                f"Received: dtype={labels.dtype}, first values {labels[:5].tolist()}"
            )
    return y_true.astype(int), y_pred.astype(int)


def accuracy(y_true, y_pred):
    """Share of exact label matches."""
    y_true, y_pred = _labels(y_true, y_pred)
    return float(np.mean(y_true == y_pred))


def confusion_matrix(y_true, y_pred, num_classes=None):
    """`matrix[i, j]` = number of documents of class `i` predicted as `j`."""
    y_true, y_pred = _labels(y_true, y_pred)
    if num_classes is None:
        num_classes = int(max(y_true.max(), y_pred.max()) + 1)
    if y_true.min() < 0 or y_pred.min() < 0 or max(y_true.max(), y_pred.max()) >= num_classes:
        raise ValueError(
            f"Labels must lie in [0, {num_classes}). "
            f"Received: y_true in [{y_true.min()}, {y_true.max()}], y_pred in [{y_pred.min()}, {y_pred.max()}]"
        )
    matrix = np.zeros((num_classes, num_classes), dtype=int)
    np.add.at(matrix, (y_true, y_pred), 1)
    return matrix


def per_class_f1(y_true, y_pred, num_classes=None):
    """F1 of each class, `2 P R / (P + R)` (0 where a class is never predicted nor present)."""
    matrix = confusion_matrix(y_true, y_pred, num_classes)
    true_positive = np.diag(matrix).astype(float)
    predicted = matrix.sum(axis=0).astype(float)
    actual = matrix.sum(axis=1).astype(float)
    denominator = predicted + actual
    return np.divide(2 * true_positive, denominator, out=np.zeros_like(true_positive), where=denominator > 0)


def macro_f1(y_true, y_pred, num_classes=None):
    """Unweighted mean of the per-class F1 over the classes that occur (truth or prediction)."""
    matrix = confusion_matrix(y_true, y_pred, num_classes)
    present = (matrix.sum(axis=0) + matrix.sum(axis=1)) > 0
    return float(np.mean(per_class_f1(y_true, y_pred, len(matrix))[present]))


def planted_sentence_top1(sentence_weights, planted_index):
    """Share of documents whose largest sentence weight falls on the planted sentence (ties split the credit).

    Args:
        sentence_weights: `(n, sentences)` attention weights (padding 0).
        planted_index: `(n,)` index of the deciding sentence.
    """
    weights = np.asarray(sentence_weights, dtype=float)
    planted_index = check_positions(planted_index, "planted_index")
    if weights.ndim != 2 or planted_index.shape != (weights.shape[0],) or weights.size == 0:
        raise ValueError(
            "Expected sentence_weights (n, sentences) and planted_index (n,). "
            f"Received: sentence_weights.shape={weights.shape}, planted_index.shape={planted_index.shape}"
        )
    if planted_index.min() < 0 or planted_index.max() >= weights.shape[1]:
        raise ValueError(
            f"planted_index must lie in [0, {weights.shape[1]}). "
            f"Received: range [{planted_index.min()}, {planted_index.max()}]"
        )
    if not np.isfinite(weights).all():
        raise ValueError("`sentence_weights` holds NaN or infinite values. Received: non-finite weights")
    right = np.arange(weights.shape[1]) == planted_index[:, None]  # (n, sentences)
    return float(tied_argmax_credit(weights, right).mean())  # a tie splits the credit (`metrics.ties`)


__all__ = ["accuracy", "confusion_matrix", "macro_f1", "per_class_f1", "planted_sentence_top1"]
