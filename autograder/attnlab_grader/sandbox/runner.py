"""The submission's child in the sandbox: runs the student's cells once, then the checks in turn.

:func:`run_checks` is the body of the one unprivileged process a submission gets (forked by
:mod:`attnlab_grader.sandbox.procs`, already confined and limited).  It never returns.

What it sends (:mod:`attnlab_grader.sandbox.wire`): on the result pipe, one frame when the cells have
run (``{"cells": true}``), then one frame per check, in order (``{"check": i, "status",
"cell_errors", "trials"}``); on the watch pipe, every forbidden operation as it runs.  The job
process times each check from the frame before it, so a check that loops, crashes or kills the
process ends as that check's verdict only, and the checks after it get a fresh child.

Every line of student code runs under a watch: the cells under the union of the checks' forbidden
operations (the job process counts a cell's operation against each check that forbids it), each
check's trials under that check's own.  The grader's own steps (setup, extraction, turning the value
into plain data) use references taken before any student code ran.
"""
from __future__ import annotations

import os
import sys

from .watch import PREAMBLE, library_changes, library_snapshot, make_plain, make_watch
from .wire import watch_line, write_frame


def _errors(e: BaseException, keep_frames: bool) -> dict:
    """``{"error", "exception", "traceback"?}`` of an exception raised by student code (a cell) or a
    trial: ``exception`` is the class name, the field the grader classifies by (never the text).
    The message is the student's exception's own ``str``: the caller runs this under the watch, and a
    message that cannot be made (its ``__str__`` raises) is replaced by words saying so."""
    import traceback
    name = type(e).__name__[:100]
    try:
        text = f"{name}: {e}"
        tb = "".join(traceback.format_exception(type(e), e, e.__traceback__)[-3:])[-1500:] if keep_frames else ""
        frames = [] if keep_frames else [f for f in traceback.extract_tb(e.__traceback__) if f.filename.startswith("<cell ")]
    except BaseException as err:  # noqa: BLE001 - the student's __str__/__repr__ may raise anything
        text, tb, frames = f"{name} (its message could not be shown: {type(err).__name__})", "", []
    if keep_frames:
        return {"error": text[:500], "exception": name, "traceback": tb}
    where = f" (in {frames[-1].filename[1:-1]}, line {frames[-1].lineno})" if frames else ""
    return {"error": text[:600] + where, "exception": name}


def run_checks(job: dict, indices: list[int], wfd: int, efd: int, snapshot=None) -> None:
    """Run ``job["cells"]``, then the checks ``job["checks"][i]`` for ``i`` in ``indices``; write the
    frames described in the module docstring to ``wfd`` and the watch records to ``efd``.  Never
    returns (``os._exit``).

    A forbidden library operation is written to ``efd`` *when it runs*, so the job process holds the
    record: nothing the student's code does afterwards (clearing a list, forging the result pipe,
    exiting) can take it back.  ``snapshot``: the zygote's :func:`library_snapshot`, taken before
    any job (shared by fork)."""
    import builtins
    import random

    import numpy as np
    import torch
    line = watch_line  # taken before any student code runs, as the other grader functions below
    where = "c"  # read by _record through its closure: no object here for student code to find and clear

    def _record(kind, name):  # no in-process de-duplication: nothing here for student code to pre-fill
        os.write(efd, line(where, kind, name))  # raises if the channel was closed

    # Taken before any student code runs.
    plain = make_plain()
    grader_ns = {"__name__": "__grader__"}
    exec(compile(PREAMBLE, "<preamble>", "exec"), grader_ns)
    grader_builtins = dict(vars(builtins))
    snap = snapshot or library_snapshot()
    # process-wide state each check starts from (as the cells left it): the random generators, the
    # gradient mode and the default dtype (an earlier check's code may have changed any of them)
    state_get = (torch.get_rng_state, np.random.get_state, random.getstate, torch.is_grad_enabled,
               torch.get_default_dtype)
    state_set = (torch.set_rng_state, np.random.set_state, random.setstate, torch.set_grad_enabled,
               torch.set_default_dtype)
    write, setprofile, exit_, base_exception = write_frame, sys.setprofile, os._exit, BaseException
    checks = job["checks"]
    reported: set = set()

    modes = (torch._C._len_torch_dispatch_stack, torch._C._len_torch_function_stack)

    def _changed(tag):  # the library replaced or deleted under us: recorded like a forbidden op
        # (called outside the watch: a dispatch or function mode still active is the student's own,
        # and would see every operation the grader's steps run)
        left = ["a torch dispatch mode left active"] if modes[0]() else []
        left += ["a torch function mode left active"] if modes[1]() else []
        for name in library_changes(snap) + left:
            if name not in reported:
                reported.add(name)
                os.write(efd, line(tag, "changed", name))

    def _watched(watch, profile, code, ns):
        with watch():
            setprofile(profile)
            try:
                exec(code, ns)
            finally:
                setprofile(None)

    def _described(watch, profile, e, keep_frames):  # the student's exception describes itself under the watch
        with watch():
            setprofile(profile)
            try:
                return _errors(e, keep_frames)
            finally:
                setprofile(None)

    ns = {"__name__": "__main__"}
    exec(compile(PREAMBLE, "<preamble>", "exec"), ns)
    union = tuple(sorted({f for i in indices for f in checks[i].get("forbid_ops", ())}))
    union_names = tuple(sorted({f for i in indices for f in checks[i].get("forbid_names", ())}))
    watch, profile = make_watch(union, _record, union_names)
    # each check's watch is built now, before any student code runs (the dispatch mode class it uses)
    watches = {i: make_watch(checks[i].get("forbid_ops", ()), _record, checks[i].get("forbid_names", ()))
               for i in indices}
    cell_errors = []
    for cell_id, source in job["cells"]:
        try:
            _watched(watch, profile, compile(source, f"<cell {cell_id}>", "exec"), ns)
        except base_exception as e:  # noqa: BLE001 - student code may raise anything
            cell_errors.append({"cell": cell_id, **_described(watch, profile, e, True)})
    _changed("c")
    start = [get() for get in state_get]
    write(wfd, {"cells": True})
    for i in indices:
        check = checks[i]
        out = {"check": i, "status": "ok", "cell_errors": cell_errors, "trials": []}
        try:
            for state, put in zip(start, state_set):  # each check starts from the state the cells left
                put(state)
            reported.clear()  # a change made during an earlier check is reported for this one too
            _changed(f"{i}.0")
            watch, profile = watches[i]
            # compiled once per check (a set's setup can be the course's model source, ~90 KB)
            setup_code = compile(check.get("setup", ""), "<grader setup>", "exec")
            extract_code = compile(check["extract"], "<grader extract>", "exec")
            for t, inputs in enumerate(check.get("trials", [{}])):
                trial = {"status": "ok"}
                where = f"{i}.{t}"
                try:
                    # the grader's snippets see the student's definitions, but the preamble's names and
                    # the builtins as they were before student code ran
                    run_ns = {k: v for k, v in ns.items() if k not in grader_builtins}
                    run_ns.update(grader_ns)
                    run_ns["__builtins__"] = grader_builtins
                    run_ns["__inputs__"] = inputs
                    _watched(watch, profile, setup_code, run_ns)
                    _watched(watch, profile, extract_code, run_ns)
                    # turning the value into data runs no student method (make_plain), and runs
                    # under the watch all the same
                    with watch():
                        trial["value"] = plain(run_ns.get("__result__"))
                except base_exception as e:  # noqa: BLE001
                    trial.update(status="error", **_described(watch, profile, e, False))
                    trial["memory"] = issubclass(type(e), MemoryError) or "can't allocate memory" in trial["error"]
                _changed(where)
                out["trials"].append(trial)  # forbidden ops travel on efd only (see wire.check_result)
                run_ns = None
        except base_exception as e:  # noqa: BLE001 - the check's own machinery failed: this check only
            out = {"check": i, "status": "crashed", "error": f"the check could not run to its end "
                                                             f"({type(e).__name__}: {e})"[:500]}
        write(wfd, out)
        out = None
    exit_(0)
