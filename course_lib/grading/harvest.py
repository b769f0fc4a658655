"""The code the grader runs in a student's kernel after the notebook.

It carries the hidden inputs inside its own text (no file that the notebook
could read beforehand holds them), evaluates each test's `call` against the
notebook's names (with a time limit per call), and writes what came back as
JSON, signed with a key that exists only in this code and in the grader: a
results file that another process wrote (a process left behind by an earlier
submission, say) is neither resumed from nor read. Values leave the kernel as
plain data (lists, numbers, strings) and are read back by `decode` without
pickle, so a submission can send its answers and nothing else; the expected
values never enter the kernel.
"""

import base64
import hashlib
import hmac
import json
import pickle

import numpy as np

# Largest number of array elements one result may hold.
MAX_ELEMENTS = 2_000_000

KERNEL_TEMPLATE = r'''
def _grader_harvest(_payload, _results_path, _key):
    import base64, builtins, hashlib, hmac, json, math, os, pickle, signal, sys, traceback, types
    import numpy as np
    user_namespace = globals()
    payload = pickle.loads(base64.b64decode(_payload))

    class _Missing(NameError):
        pass

    class _Student:
        def __getattr__(self, name):
            try:
                return user_namespace[name]
            except KeyError:
                raise _Missing(name) from None

    def _encode(value, depth=0):
        if depth > 20:
            return {"__unencodable__": "nesting too deep"}
        if value is None or isinstance(value, (bool, str)):
            return value
        if isinstance(value, (int, np.integer)):
            return int(value)
        if isinstance(value, (float, np.floating)):
            value = float(value)
            return value if math.isfinite(value) else {"__float__": repr(value)}
        if isinstance(value, (tuple, list)):
            return {"__seq__": [_encode(v, depth + 1) for v in value][:100000], "tuple": isinstance(value, tuple)}
        if isinstance(value, (set, frozenset)):
            return {"__set__": [_encode(v, depth + 1) for v in sorted(value, key=repr)][:100000]}
        if isinstance(value, dict):
            return {"__dict__": [[str(k), _encode(v, depth + 1)] for k, v in list(value.items())[:10000]]}
        array = None
        if isinstance(value, np.ndarray):
            array = value
        elif hasattr(value, "numpy") and callable(value.numpy):
            array = np.asarray(value.numpy())
        elif hasattr(value, "__array__"):
            array = np.asarray(value)
        if array is not None:
            if array.dtype.kind not in "biuf":
                return {"__unencodable__": f"array of dtype {array.dtype}"}
            if array.size > __MAX_ELEMENTS__:
                return {"__unencodable__": f"array with {array.size} elements"}
            data = array.astype(float).tolist() if array.dtype.kind == "f" else array.astype(int).tolist()
            return {"__array__": data, "shape": list(array.shape), "kind": array.dtype.kind}
        return {"__unencodable__": type(value).__name__}

    class _CallTimeout(BaseException):
        # Not an Exception: a student's `except Exception` around a slow loop must not swallow it.
        pass

    running = {"test": None, "alarms": 0}

    def _on_alarm(signum, frame):
        # The timer repeats every second after the limit. A call that catches the stop three times
        # (a bare `except:` in a retry loop) is recorded as timed out and the kernel ends; the
        # runner restarts it and the harvest resumes after this test.
        running["alarms"] += 1
        if running["alarms"] > 3:
            results[running["test"]] = {"status": "timeout"}
            _save(results)
            os._exit(1)
        raise _CallTimeout("the call took too long")

    helpers = {"__builtins__": builtins, "np": np}
    if payload["setup"]:
        exec(compile(payload["setup"], "<grader setup>", "exec"), helpers)
    reference_namespace = {"__builtins__": builtins, "np": np}
    for source in payload["references"].values():
        exec(compile(source, "<grader reference>", "exec"), reference_namespace)

    def _counted(name, function, calls):
        def counted(*args, **kwargs):
            calls[name] = calls.get(name, 0) + 1
            return function(*args, **kwargs)
        return counted

    def _signature(text):
        return hmac.new(_key.encode(), text.encode(), hashlib.sha256).hexdigest()

    def _save(results):
        # After every test, so a call that kills the kernel loses only itself;
        # the runner restarts the kernel and this cell resumes after it.
        text = json.dumps(results)
        with open(_results_path + ".tmp", "w") as handle:
            json.dump({"signature": _signature(text), "results": text}, handle)
        os.replace(_results_path + ".tmp", _results_path)

    try:  # a rerun after the kernel died resumes after the tests already done, from results it signed
        with open(_results_path) as handle:
            saved = json.load(handle)
        if not hmac.compare_digest(str(saved["signature"]).encode(), _signature(saved["results"]).encode()):
            raise ValueError("not signed by this run")
        results = dict(json.loads(saved["results"]))
    except (OSError, ValueError, TypeError, KeyError, AttributeError):
        results = {}
    for name, outcome in list(results.items()):
        if not isinstance(outcome, dict) or outcome.get("status") == "running":
            results[name] = {"status": "died"}
    for test in payload["tests"]:
        if test["name"] in results:
            continue
        results[test["name"]] = {"status": "running"}
        _save(results)
        swapped, calls = {}, {}
        for name in test["substitute"]:
            swapped[name] = user_namespace.get(name, _Missing)
            user_namespace[name] = _counted(name, reference_namespace[name], calls)
        environment = dict(helpers)
        environment.update({"student": _Student(), "inputs": test["inputs"]})
        running.update(test=test["name"], alarms=0)
        previous = signal.signal(signal.SIGALRM, _on_alarm)
        signal.setitimer(signal.ITIMER_REAL, float(test["timeout"]), 1.0)
        try:
            value = eval(compile(test["call"], "<hidden test>", "eval"), environment)
            outcome = {"status": "ok", "value": _encode(value), "calls": dict(calls)}
        except _Missing as error:
            outcome = {"status": "missing", "name": str(error)}
        except _CallTimeout:
            outcome = {"status": "timeout"}
        except BaseException as error:
            outcome = {"status": "error", "type": type(error).__name__, "message": str(error)[:400]}
        finally:
            signal.setitimer(signal.ITIMER_REAL, 0)
            signal.signal(signal.SIGALRM, previous)
            for name, old in swapped.items():
                if old is _Missing:
                    user_namespace.pop(name, None)
                else:
                    user_namespace[name] = old
        results[test["name"]] = outcome
        _save(results)

_grader_harvest(__PAYLOAD__, __RESULTS__, __KEY__)
del _grader_harvest
'''


def kernel_code(payload, results_path, key):
    """The harvest cell for one submission.

    Args:
        payload: what `payload()` returns; it travels inside the code.
        results_path: the file the kernel writes the results to.
        key: a secret made for this one run, which signs the results (`read_results` checks it).

    Returns:
        The cell's source.
    """
    return (
        KERNEL_TEMPLATE.replace("__MAX_ELEMENTS__", str(MAX_ELEMENTS))
        .replace("__PAYLOAD__", repr(base64.b64encode(pickle.dumps(payload)).decode()))
        .replace("__RESULTS__", repr(str(results_path)))
        .replace("__KEY__", repr(key))
    )


def payload(assignment, inputs_by_test):
    """What the kernel needs: setup code, reference sources, calls and inputs."""
    return {
        "setup": assignment.kernel_setup,
        "references": assignment.reference_sources(),
        "tests": [
            {
                "name": test.name,
                "call": test.call,
                "inputs": inputs_by_test[test.name],
                "substitute": list(test.substitute),
                "timeout": test.timeout,
            }
            for test in assignment.tests
        ],
    }


def decode(value):
    """Turns the kernel's JSON back into Python values (no code is run)."""
    if isinstance(value, list):
        return [decode(v) for v in value]
    if not isinstance(value, dict):
        return value
    if "__array__" in value:
        dtype = float if value.get("kind") == "f" else int
        try:
            array = np.asarray(value["__array__"], dtype=dtype)
            return array.reshape(value["shape"])
        except (ValueError, TypeError):
            return {"__unencodable__": "malformed array"}
    if "__seq__" in value:
        items = [decode(v) for v in value["__seq__"]]
        return tuple(items) if value.get("tuple") else items
    if "__set__" in value:
        items = [decode(v) for v in value["__set__"]]
        try:
            return set(items)
        except TypeError:
            return {"__unencodable__": "set of unhashable values"}
    if "__dict__" in value:
        return {str(k): decode(v) for k, v in value["__dict__"]}
    if "__float__" in value:
        return float(value["__float__"]) if value["__float__"] in ("nan", "inf", "-inf") else float("nan")
    return value


def read_results(path, key, max_bytes=64 * 2**20):
    """The results the harvest wrote to `path` and signed with `key`.

    Returns:
        `(results, "")`, or `(None, reason)` when the file is missing, unreadable, or not signed
        with `key` (written by something other than this run's hidden tests).
    """
    try:
        if path.stat().st_size > max_bytes:
            return None, f"the results were larger than {max_bytes // 2**20} MB"
        with open(path) as handle:
            raw = json.load(handle)
    except FileNotFoundError:
        return None, "no results were produced (the kernel did not reach the hidden tests)"
    except (OSError, ValueError) as error:
        return None, f"the results could not be read ({type(error).__name__})"
    text = raw.get("results") if isinstance(raw, dict) else None
    expected = hmac.new(key.encode(), str(text).encode(), hashlib.sha256).hexdigest()
    if not isinstance(text, str) or not hmac.compare_digest(str(raw.get("signature")).encode(), expected.encode()):
        return None, "the results file was not the one the hidden tests wrote (something else replaced it)"
    try:
        results = json.loads(text)
    except ValueError:
        return None, "the results could not be read (ValueError)"
    if not isinstance(results, dict):
        return None, "the results were not in the expected form"
    return results, ""
