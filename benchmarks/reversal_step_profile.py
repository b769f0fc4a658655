"""Where one reversal training step spends its time, and three ways to write the decoder loop.

    python benchmarks/reversal_step_profile.py [--repeats 200] [--default-threads] [--policy mixed_bfloat16]

Part 1 times the course's reversal model (batch 64, length 10) piece by
piece: the encoder and the whole model, forward only and forward + backward.
Part 2 times the attentional decoder's loop written three ways in plain
TensorFlow, all with the same weights and the same result (the script prints
the largest gradient difference against the first):

* `lecture`: each step computes `U_att s_{t-1}`, the context `c_t`, and the
  GRU on `[e(y_{t-1}); c_t]`, as the course's decoder does;
* `fused`: `e(y_{t-1})`'s share of the GRU input projection is computed for
  all steps before the loop, and `U_att` and the GRU's recurrent kernel act on
  `s_{t-1}` as one matmul;
* `projected values`: the context's share of the GRU input is computed as
  `sum_j alpha_j (h_j W_c)`, with `h_j W_c` computed once per sequence, so the
  loop has no `(batch, 256) x (256, 384)` matmul left;
* `unrolled`: the lecture form with a Python loop over a fixed length, so the
  graph has no `tf.while_loop` (no loop frames, no stacks for the backward
  pass): what is left is the ops themselves.

Part 3 times single matmuls of the loop's shapes (one thread per op unless
`--default-threads`), in float32 and bfloat16, to say how fast this CPU's
arithmetic is.

It answers one question of `docs/reversal.md` ("Speed"): is the step bound by
per-op overhead, which rewriting could remove, or by arithmetic?
"""

import argparse
import os
import time

import numpy as np

from course_lib.tasks.arguments import positive_int

BATCH, SOURCE_LENGTH, EMBEDDING, UNITS = 64, 10, 32, 128
VALUE_DIM = 2 * UNITS  # bidirectional annotations h_j
TARGET_LENGTH = SOURCE_LENGTH + 1


def timed(function, arguments, repeats):
    """Milliseconds per call, after five warm-up calls."""
    for _ in range(5):
        function(*arguments)
    start = time.perf_counter()
    for _ in range(repeats):
        result = function(*arguments)
    import tensorflow as tf

    [tf.convert_to_tensor(x).numpy() for x in tf.nest.flatten(result) if x is not None]
    return (time.perf_counter() - start) * 1000 / repeats


def profile_course_model(repeats):
    import tensorflow as tf

    from course_lib.data import reversal as data
    from course_lib.tasks.reversal import ReversalConfig, build_model

    model = build_model(ReversalConfig.for_profile("full"))
    inputs, targets = next(iter(data.as_dataset(1, BATCH, SOURCE_LENGTH, SOURCE_LENGTH, seed=0)))
    model(inputs)
    signature = {key: tf.TensorSpec((None, None), tf.int32) for key in inputs}
    encoder_weights = model.encoder.trainable_variables

    @tf.function(input_signature=[signature])
    def encoder_forward(inputs):
        return model.encoder(inputs["source"], training=True)[0]

    @tf.function(input_signature=[signature])
    def encoder_gradients(inputs):
        with tf.GradientTape() as tape:
            outputs, initial_state, _ = model.encoder(inputs["source"], training=True)
            loss = tf.reduce_sum(outputs) + tf.reduce_sum(initial_state)
        return tape.gradient(loss, encoder_weights)

    @tf.function(input_signature=[signature])
    def model_forward(inputs):
        return model(inputs, training=True)

    @tf.function(input_signature=[signature, tf.TensorSpec((None, None), tf.int32)])
    def model_gradients(inputs, targets):
        with tf.GradientTape() as tape:
            logits = model(inputs, training=True)
            logits = tf.cast(logits, tf.float32)
            loss = tf.reduce_mean(tf.nn.sparse_softmax_cross_entropy_with_logits(targets, logits))
        return tape.gradient(loss, model.trainable_variables)

    print(f"Course model, batch {BATCH}, length {SOURCE_LENGTH}, {model.dtype_policy.name} (ms per call):")
    for name, function, arguments in [
        ("encoder forward", encoder_forward, (inputs,)),
        ("encoder forward + backward", encoder_gradients, (inputs,)),
        ("model forward", model_forward, (inputs,)),
        ("model forward + backward", model_gradients, (inputs, targets)),
    ]:
        print(f"  {name:28s} {timed(function, arguments, repeats):6.2f}", flush=True)


def gru_update(input_projection, recurrent_projection, state):
    """Keras's GRU (reset gate after the recurrent matmul) from the two projections."""
    import tensorflow as tf

    input_z, input_r, input_h = tf.split(input_projection, 3, axis=-1)
    recurrent_z, recurrent_r, recurrent_h = tf.split(recurrent_projection, 3, axis=-1)
    update = tf.sigmoid(input_z + recurrent_z)
    reset = tf.sigmoid(input_r + recurrent_r)
    candidate = tf.tanh(input_h + reset * recurrent_h)
    return update * state + (1 - update) * candidate


def decoder_variants():
    """Three `tf.function`s `(values, embedded) -> gradients`, and their weights."""
    import tensorflow as tf

    rng = np.random.default_rng(0)

    def weight(*shape):
        return tf.Variable(rng.normal(0, 0.1, shape).astype("float32"))

    W_att, U_att, v_att = weight(VALUE_DIM, UNITS), weight(UNITS, UNITS), weight(UNITS)
    kernel, recurrent_kernel = weight(EMBEDDING + VALUE_DIM, 3 * UNITS), weight(UNITS, 3 * UNITS)
    biases = weight(2, 3 * UNITS)
    weights = [W_att, U_att, v_att, kernel, recurrent_kernel, biases]
    initial_state = tf.constant(rng.normal(size=(BATCH, UNITS)).astype("float32"))
    signature = [tf.TensorSpec((BATCH, SOURCE_LENGTH, VALUE_DIM)), tf.TensorSpec((None, BATCH, EMBEDDING))]

    def run_loop(step, steps):
        states = tf.TensorArray(tf.float32, size=steps)

        def body(t, state, states):
            state = step(t, state)
            return t + 1, state, states.write(t, state)

        _, _, states = tf.while_loop(lambda t, *_: t < steps, body, (0, initial_state, states))
        return tf.reduce_sum(states.stack() ** 2)

    def scores(keys, projected_query):
        return tf.nn.softmax(tf.tensordot(tf.tanh(keys + projected_query[:, None, :]), v_att, 1))  # (batch, src_len)

    def lecture_step(keys, values, embedded, t, state):
        """One step of the course's decoder: attention with `U_att s_{t-1}`, then the GRU on `[e(y_{t-1}); c_t]`."""
        weights_t = scores(keys, state @ U_att)  # (batch, src_len)
        context = tf.einsum("bs,bsd->bd", weights_t, values)  # (batch, value_dim)
        cell_input = tf.concat([embedded[t], context], -1)  # (batch, emb + value_dim)
        return gru_update(cell_input @ kernel + biases[0], state @ recurrent_kernel + biases[1], state)

    @tf.function(input_signature=signature)
    def lecture(values, embedded):
        with tf.GradientTape() as tape:
            keys = values @ W_att  # (batch, src_len, units)
            loss = run_loop(lambda t, state: lecture_step(keys, values, embedded, t, state), tf.shape(embedded)[0])
        return tape.gradient(loss, weights)

    @tf.function(input_signature=signature)
    def fused(values, embedded):
        with tf.GradientTape() as tape:
            keys = values @ W_att  # (batch, src_len, units)
            embedded_projection = tf.einsum("tbe,eg->tbg", embedded, kernel[:EMBEDDING]) + biases[0]
            state_kernel = tf.concat([U_att, recurrent_kernel], 1)  # (units, units + 3 units)

            def step(t, state):
                projected = state @ state_kernel  # (batch, 4 units)
                weights_t = scores(keys, projected[:, :UNITS])
                context = tf.einsum("bs,bsd->bd", weights_t, values)
                return gru_update(embedded_projection[t] + context @ kernel[EMBEDDING:],
                                  projected[:, UNITS:] + biases[1], state)

            loss = run_loop(step, tf.shape(embedded)[0])
        return tape.gradient(loss, weights)

    @tf.function(input_signature=signature)
    def projected_values(values, embedded):
        with tf.GradientTape() as tape:
            keys = values @ W_att
            value_projection = values @ kernel[EMBEDDING:]  # (batch, src_len, 3 units)
            embedded_projection = tf.einsum("tbe,eg->tbg", embedded, kernel[:EMBEDDING]) + biases[0]

            def step(t, state):
                weights_t = scores(keys, state @ U_att)
                context_projection = tf.einsum("bs,bsg->bg", weights_t, value_projection)  # (batch, 3 units)
                return gru_update(embedded_projection[t] + context_projection,
                                  state @ recurrent_kernel + biases[1], state)

            loss = run_loop(step, tf.shape(embedded)[0])
        return tape.gradient(loss, weights)

    @tf.function(input_signature=[signature[0], tf.TensorSpec((TARGET_LENGTH, BATCH, EMBEDDING))])
    def unrolled(values, embedded):
        with tf.GradientTape() as tape:
            keys = values @ W_att  # (batch, src_len, units)
            state, states = initial_state, []
            for t in range(TARGET_LENGTH):  # a Python loop: traced as TARGET_LENGTH copies of the step
                state = lecture_step(keys, values, embedded, t, state)
                states.append(state)
            loss = tf.reduce_sum(tf.stack(states) ** 2)
        return tape.gradient(loss, weights)

    return {"lecture": lecture, "fused": fused, "projected values": projected_values, "unrolled": unrolled}


def matmul_throughput(repeats):
    """GFLOP/s of one `(batch, k) x (k, n)` matmul, float32 and bfloat16."""
    import tensorflow as tf

    print("One matmul at a time, 200 in a row inside one tf.function, threads per op as above (GFLOP/s):")
    shapes = [(BATCH, UNITS, UNITS), (BATCH, EMBEDDING + VALUE_DIM, 3 * UNITS), (BATCH, UNITS, 3 * UNITS)]
    for rows, inner, columns in shapes:
        rates = []
        for dtype in (tf.float32, tf.bfloat16):
            left = tf.cast(tf.random.stateless_normal((rows, inner), (0, 1)), dtype)
            right = tf.cast(tf.random.stateless_normal((inner, columns), (0, 2)), dtype)

            @tf.function
            def chain(left, right):
                def body(step, total):
                    return step + 1, total + left @ right

                # parallel_iterations=1: one matmul at a time, even with two ops allowed at once
                return tf.while_loop(lambda step, _: step < 200, body, (0, tf.zeros((rows, columns), left.dtype)),
                                     parallel_iterations=1)[1]

            milliseconds = timed(chain, (left, right), max(1, repeats // 40)) / 200
            rates.append(2 * rows * inner * columns / milliseconds / 1e6)
        print(f"  ({rows}, {inner}) x ({inner}, {columns})  float32 {rates[0]:6.1f}   bfloat16 {rates[1]:6.1f}")


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=positive_int, default=200)
    parser.add_argument("--default-threads", action="store_true", help="keep TensorFlow's thread defaults")
    parser.add_argument("--policy", default="float32", help="Keras dtype policy of the course model (part 1)")
    args = parser.parse_args()

    from course_lib.training.threads import tune_for_small_cpu

    tuned = False if args.default_threads else tune_for_small_cpu()
    import tensorflow as tf

    import keras

    print(f"TensorFlow threads: {'1 per op, 2 ops at a time' if tuned else 'defaults'}")
    keras.config.set_dtype_policy(args.policy)
    profile_course_model(args.repeats)
    keras.config.set_dtype_policy("float32")

    rng = np.random.default_rng(1)
    values = tf.constant(rng.normal(size=(BATCH, SOURCE_LENGTH, VALUE_DIM)).astype("float32"))
    embedded = tf.constant(rng.normal(size=(TARGET_LENGTH, BATCH, EMBEDDING)).astype("float32"))
    variants = decoder_variants()
    reference = variants["lecture"](values, embedded)
    print(f"Decoder loop alone, {TARGET_LENGTH} steps, forward + backward (ms per call):")
    times = {}
    for name, function in variants.items():
        gradients = function(values, embedded)
        difference = max(
            float(tf.reduce_max(tf.abs(a - b)) / tf.reduce_max(tf.abs(b))) for a, b in zip(gradients, reference)
        )
        times[name] = timed(function, (values, embedded), args.repeats)
        print(f"  {name:28s} {times[name]:6.2f}   gradients differ by {difference:.1e} (relative)", flush=True)
    flops = lecture_matmul_flops()
    print(f"The lecture form does {flops / 1e6:.0f} MFLOP of matmuls per call (forward + backward, "
          f"counted as 3 x forward): {flops / 1e6 / times['lecture']:.0f} GFLOP/s on {os.cpu_count()} cores.")
    matmul_throughput(args.repeats)


def lecture_matmul_flops():
    """Matmul FLOPs of one forward + backward call of the lecture form (backward = 2 x forward)."""
    per_step = UNITS * UNITS + (EMBEDDING + VALUE_DIM) * 3 * UNITS + UNITS * 3 * UNITS  # U_att, W, U
    forward = 2 * BATCH * (TARGET_LENGTH * per_step + SOURCE_LENGTH * VALUE_DIM * UNITS)  # + W_att h_j
    return 3 * forward


if __name__ == "__main__":
    main()
