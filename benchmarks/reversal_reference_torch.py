"""A PyTorch reference for the reversal experiment, written for the benchmark.

The classic eager implementation: a GRU encoder, a GRU decoder with additive
attention stepped in a Python loop, teacher forcing, one length per batch,
embedding 32, GRU 128, batch 64, Adam 2e-3, 2,500 steps. Only the benchmark
runs it (PyTorch is not a dependency of the course), in a process of its own:

    python benchmarks/reversal_reference_torch.py [--steps 2500]

prints one JSON line with the seconds and the exact match.
"""

import argparse
import importlib.util
import json
import time

import numpy as np

from course_lib.data import reversal
from course_lib.tasks.arguments import positive_int


def parse_arguments(argv=None):
    """The command line, read before PyTorch is imported: `--help` needs no PyTorch, and a machine without
    it gets a one-line error naming the package instead of a ModuleNotFoundError traceback."""
    parser = argparse.ArgumentParser(description="The PyTorch reference run of the reversal experiment.")
    parser.add_argument("--steps", type=positive_int, default=2500)
    args = parser.parse_args(argv)
    if importlib.util.find_spec("torch") is None:
        parser.exit(2, f"{parser.prog}: error: this reference needs the package 'torch' (PyTorch), which is not "
                       "installed\n")
    return args


if __name__ == "__main__":
    ARGS = parse_arguments()

import torch  # noqa: E402
from torch import nn  # noqa: E402


class Encoder(nn.Module):
    def __init__(self, vocab, embedding_dim, units):
        super().__init__()
        self.embedding = nn.Embedding(vocab, embedding_dim)
        self.gru = nn.GRU(embedding_dim, units, batch_first=True)

    def forward(self, source):
        outputs, final = self.gru(self.embedding(source))
        return outputs, final[0]


class AttentionDecoder(nn.Module):
    def __init__(self, vocab, embedding_dim, units):
        super().__init__()
        self.embedding = nn.Embedding(vocab, embedding_dim)
        self.U_att = nn.Linear(units, units, bias=False)
        self.W_att = nn.Linear(units, units, bias=False)
        self.v_att = nn.Linear(units, 1, bias=False)
        self.cell = nn.GRUCell(embedding_dim + units, units)
        self.out = nn.Linear(units, vocab)

    def step(self, token, state, values):
        scores = self.v_att(torch.tanh(self.U_att(state)[:, None] + self.W_att(values)))[..., 0]
        weights = torch.softmax(scores, dim=1)
        context = torch.einsum("bs,bsd->bd", weights, values)
        state = self.cell(torch.cat([self.embedding(token), context], dim=-1), state)
        return self.out(state), state, weights


def train_and_evaluate(steps=2500, seed=0, lengths=(5, 7, 10), count=500, threads=None):
    if threads:
        torch.set_num_threads(threads)
    torch.manual_seed(seed)
    vocab = reversal.VOCAB_SIZE
    encoder, decoder = Encoder(vocab, 32, 128), AttentionDecoder(vocab, 32, 128)
    parameters = list(encoder.parameters()) + list(decoder.parameters())
    optimizer = torch.optim.Adam(parameters, lr=2e-3)
    loss_fn = nn.CrossEntropyLoss()
    start = time.perf_counter()
    for inputs, target_out in reversal.training_batches(steps, 64, 5, 10, seed=seed):
        source = torch.as_tensor(inputs["source"], dtype=torch.long)
        target_in = torch.as_tensor(inputs["target_in"], dtype=torch.long)
        target_out = torch.as_tensor(target_out, dtype=torch.long)
        values, state = encoder(source)
        loss = 0.0
        for t in range(target_in.shape[1]):
            logits, state, _ = decoder.step(target_in[:, t], state, values)
            loss = loss + loss_fn(logits, target_out[:, t])
        optimizer.zero_grad()
        (loss / target_in.shape[1]).backward()
        optimizer.step()
    train_seconds = time.perf_counter() - start
    scores = {}
    with torch.no_grad():
        for length in lengths:
            source, target = reversal.test_set(length, count)
            values, state = encoder(torch.as_tensor(source, dtype=torch.long))
            token = torch.full((count,), reversal.GO, dtype=torch.long)
            outputs = []
            for _ in range(length + 1):
                logits, state, _ = decoder.step(token, state, values)
                token = logits.argmax(-1)
                outputs.append(token)
            predicted = torch.stack(outputs, 1).numpy()
            scores[length] = float(np.mean(np.all(predicted == target, axis=1)))
    total_seconds = time.perf_counter() - start
    return {"train_seconds": train_seconds, "total_seconds": total_seconds, "exact_match": scores}


if __name__ == "__main__":
    print(json.dumps(train_and_evaluate(ARGS.steps)))
