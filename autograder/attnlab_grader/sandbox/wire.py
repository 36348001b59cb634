"""The sandbox's wire protocol: frames between the grader and the zygote, and reading what a
submission's child sent back.

Both sides use this module: the grader imports it, and the zygote, which cannot see the
repository, receives it as source text (:mod:`attnlab_grader.sandbox.zygote`).  It imports nothing
from the course and runs no student code.

Frames (grader <-> zygote, and child -> job process): ``8-byte big-endian length + UTF-8 JSON``.
Watch records (child -> job process, a second pipe): one line ``<tag>\\t<kind>\\t<operation>`` per
forbidden library operation *as it runs* (:func:`watch_line`); ``<tag>`` is ``c`` (the answer cells), or
``<check>.<trial>`` (0-based indices into the job's checks and that check's trials); ``<kind>`` is one of
:data:`RECORD_KINDS`.  A check's result lists them as typed records ``{"kind": ..., "op": ...}``
(:func:`check_result`, shown in words by :func:`record_text`).
"""
from __future__ import annotations

import json
import os
import signal
import struct

#: Deepest nesting of the JSON a check may send back (``_plain`` stops at depth 8 of the value:
#: about 20 levels of JSON); anything deeper is refused before it reaches the grader.
MAX_RESULT_DEPTH = 48
#: Most bytes one check's result may take on the pipe; a frame announcing more ends that check
#: (crashed: nothing was compared).
MAX_RESULT_BYTES = 8_000_000


def read_exact(fd: int, n: int) -> bytes:
    """Exactly ``n`` bytes from file descriptor ``fd``; raises ``EOFError`` when it closes first."""
    buf = b""
    while len(buf) < n:
        chunk = os.read(fd, n - len(buf))
        if not chunk:
            raise EOFError
        buf += chunk
    return buf


def encode_frame(obj) -> bytes:
    """``obj`` (JSON-serialisable) as one frame: 8-byte big-endian length, then UTF-8 JSON."""
    data = json.dumps(obj).encode("utf-8")
    return struct.pack(">Q", len(data)) + data


def write_frame(fd: int, obj) -> None:
    """Write ``obj`` as one frame (:func:`encode_frame`) to file descriptor ``fd``, all of it."""
    data = encode_frame(obj)
    while data:
        n = os.write(fd, data)
        data = data[n:]


def split_frames(buf: bytes) -> tuple[list[bytes], bytes]:
    """``(complete frame payloads, the incomplete rest)`` of the bytes ``buf`` read so far."""
    out = []
    while len(buf) >= 8:
        (n,) = struct.unpack(">Q", buf[:8])
        if len(buf) < 8 + n:
            break
        out.append(buf[8:8 + n])
        buf = buf[8 + n:]
    return out, buf


def json_depth(value, limit: int) -> int:
    """Nesting depth of a parsed JSON value (iterative: never a ``RecursionError``); stops counting
    once past ``limit`` (the answer is then some depth above ``limit``)."""
    deepest, stack = 0, [(value, 1)]
    while stack:
        v, d = stack.pop()
        if isinstance(v, (dict, list)):
            deepest = max(deepest, d)
            if deepest > limit:
                return deepest
            stack.extend((x, d + 1) for x in (v.values() if isinstance(v, dict) else v))
    return deepest


def ended(wstatus: int) -> dict:
    """The result of a check whose process ended (``os.waitpid`` status ``wstatus``) before it
    sent a readable result: ``{"status": "timeout"|"crashed", "error": why, in words}``."""
    if os.WIFSIGNALED(wstatus):
        sig = os.WTERMSIG(wstatus)
        kind = "timeout" if sig == signal.SIGXCPU else "crashed"
        return {"status": kind, "error": f"the process was killed by signal {sig}"
                + (" (CPU time limit)" if kind == "timeout" else "")}
    code = os.WEXITSTATUS(wstatus) if os.WIFEXITED(wstatus) else None
    return {"status": "crashed",
            "error": f"the process exited (code {code}) before producing a result"
                     " (sys.exit/os._exit or a crash in the interpreter)"}


#: The kinds of watch record: ``op``, a forbidden aten operation ran (its name); ``call``, library code of a
#: forbidden name was called (``<qualified name> (in <module>)``); ``changed``, part of a library was replaced
#: or deleted, or a torch mode left active (what changed).
RECORD_KINDS = ("op", "call", "changed")


def watch_line(tag: str, kind: str, name: str) -> bytes:
    """One line of the watch channel: the record ``kind`` (one of :data:`RECORD_KINDS`) of ``name`` (cut to 200
    characters, tabs and line breaks replaced) under ``tag``."""
    text = name[:200].replace("\t", " ").replace("\n", " ").replace("\r", " ")
    return f"{tag}\t{kind}\t{text}\n".encode()


def record_text(record: dict) -> str:
    """A watch record (``{"kind", "op"}``) in words for a report's evidence: ``call: <op>``,
    ``changed library: <op>``, or the operation's name."""
    prefix = {"call": "call: ", "changed": "changed library: "}.get(record["kind"], "")
    return prefix + record["op"]


def watch_records(events: bytes) -> dict:
    """``{tag: {(kind, operation), ...}}`` from the watch channel's bytes (see the module docstring);
    malformed lines (an unknown tag or kind, no operation) are skipped."""
    out: dict = {}
    for line in events.decode(errors="replace").splitlines():
        tag, _, rest = line.partition("\t")
        kind, _, name = rest.partition("\t")
        if name and kind in RECORD_KINDS and (tag == "c" or tag.replace(".", "", 1).isdigit()):
            out.setdefault(tag, set()).add((kind, name))
    return out


def forbidden_by(check: dict, record: tuple[str, str]) -> bool:
    """Whether the watch record ``(kind, operation)`` counts against ``check`` (a job check with ``forbid_ops``
    and ``forbid_names``): a replaced library (``changed``) always does; an ``op`` when ``check`` forbids it
    (a substring match, as the watch matches); a library ``call`` (``<qualified name> (in <module>)``)
    when a part of its name is one of the check's ``forbid_names`` (compared without case and
    underscores, as the watch compares them)."""
    kind, op = record
    if kind == "changed":
        return True
    if kind == "call":
        names = {n.replace("_", "").lower() for n in check.get("forbid_names", ())}
        qualname = op.split(" (in ", 1)[0]  # the function's own name, not its module's (the watch wrote both)
        return not names.isdisjoint(p.replace("_", "").lower() for p in qualname.split("."))
    return any(f in op for f in check.get("forbid_ops", ()))


def _unreadable(err: BaseException) -> dict:
    what = "nested too deeply" if isinstance(err, RecursionError) else "not a result the grader can read"
    return {"status": "crashed", "error": f"the check sent back something {what} ({type(err).__name__}); "
                                          "nothing was compared"}


def check_result(data: bytes, records: dict, index: int, check: dict, cells_ops=()) -> dict:
    """One check's result from the payload ``data`` its child sent and the watch ``records`` kept by
    the job process (:func:`watch_records`); ``index`` is the check's place in the job, ``cells_ops``
    the watch records of the answer cells.  Never raises: whatever the bytes are (not JSON, not
    UTF-8, nested too deeply, the wrong shape), the answer is one result for this check, with the
    reason in words.  The record of forbidden operations comes from the watch channel only."""
    try:
        out = json.loads(data.decode("utf-8"))
        if not isinstance(out, dict):
            raise ValueError("not a result object")
        if json_depth(out, MAX_RESULT_DEPTH) > MAX_RESULT_DEPTH:
            return {"status": "crashed", "error": f"the check sent back a value nested more than "
                                                  f"{MAX_RESULT_DEPTH} levels deep (the grader reads plain "
                                                  "numbers and lists); nothing was compared"}
        trials = out.get("trials")
        if trials is not None and (not isinstance(trials, list) or not all(isinstance(t, dict) for t in trials)):
            raise ValueError("trials are not result objects")
        if not isinstance(out.get("cell_errors", []), list) or \
                not all(isinstance(c, dict) and isinstance(c.get("cell"), str) and isinstance(c.get("error"), str)
                        for c in out.get("cell_errors", [])):
            raise ValueError("cell errors are not result objects")
        cells = {op for op in cells_ops if forbidden_by(check, op)}
        for t, trial in enumerate(trials or []):  # the record kept here, never the child's own claim
            trial["forbidden_ops"] = [{"kind": k, "op": op} for k, op in
                                      sorted(set(records.get(f"{index}.{t}", ())) | cells,
                                             key=lambda r: record_text({"kind": r[0], "op": r[1]}))]
        out.pop("check", None)
        return out
    except (ValueError, RecursionError, MemoryError) as err:
        return _unreadable(err)
    except Exception as err:  # noqa: BLE001 - one check's failure stays in that check
        return {"status": "crashed", "error": f"the check's result could not be read ({type(err).__name__})"}
