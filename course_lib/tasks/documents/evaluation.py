"""Scores of a trained classifier (accuracy, macro-F1, confusion, planted-sentence top-1) and its explanations."""

import numpy as np


def evaluate_documents(model, pipeline, documents, batch_size=64):
    """Accuracy, macro-F1, the confusion matrix and, on generated data, planted-sentence top-1.

    `documents` counts every document scored for accuracy. Planted-sentence
    top-1 can only be scored on the documents whose planted sentence survives
    the pipeline's `max_sentences` limit (a model cannot weigh a sentence it
    never read), so it comes with `planted_documents`, the count of those
    documents; it may be smaller than `documents` (with `max_sentences=4`,
    86 of the 300 test documents of `document_splits(800, 150, 300)` are
    left out). When no planted sentence survives, `planted_documents`
    is 0 and `planted_sentence_top1` is None.

    Returns:
        A dict of plain Python numbers and lists (JSON-ready).
    """
    from course_lib.metrics.classification import accuracy, confusion_matrix, macro_f1, planted_sentence_top1

    ids, report = pipeline.encode(documents.texts, warn=False)
    explained = explain_batches(model, ids, batch_size)
    predicted = explained["probabilities"].argmax(axis=-1)
    num_classes = len(documents.class_names)
    metrics = {
        "documents": len(documents),
        "accuracy": accuracy(documents.labels, predicted),
        "macro_f1": macro_f1(documents.labels, predicted, num_classes),
        "confusion_matrix": confusion_matrix(documents.labels, predicted, num_classes).tolist(),
        "class_names": list(documents.class_names),
        "truncation": report.__dict__,
    }
    if documents.planted_index is not None and "sentence_weights" in explained:
        planted = np.asarray(documents.planted_index)
        inside = planted < ids.shape[1]
        metrics["planted_documents"] = int(inside.sum())
        metrics["planted_sentence_top1"] = planted_sentence_top1(
            explained["sentence_weights"][inside], planted[inside]
        ) if inside.any() else None
    return metrics


def explain_batches(model, ids, batch_size=64):
    """`model.explain` over batches; concatenated NumPy arrays."""
    parts = [model.explain(ids[i:i + batch_size]) for i in range(0, len(ids), batch_size)]
    return {key: np.concatenate([p[key] for p in parts]) for key in parts[0]}

def classify_texts(model, pipeline, class_names, texts):
    """Class name, probability and weights for each raw text."""
    ids, report = pipeline.encode(texts, warn=True)
    explained = explain_batches(model, ids)
    results = []
    for i, probabilities in enumerate(explained["probabilities"]):
        best = int(np.argmax(probabilities))
        results.append({
            "label": class_names[best],
            "probability": float(probabilities[best]),
            "sentence_weights": explained.get("sentence_weights", np.zeros((len(ids), 0)))[i],
            "ids": ids[i],
        })
    return results, report
