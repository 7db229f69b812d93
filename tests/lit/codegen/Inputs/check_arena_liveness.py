"""Checks a plan (`kiln inspect --json` on stdin) never overwrites a buffer that is still live.

A buffer is live from the first step that names it to the last (graph inputs from the start,
graph outputs to the end), counting every operand a step's schema lists. Two arena buffers
whose byte ranges overlap must not be live at once, except a result written in place over an
operand that dies at that step (same offset, the operand's last step the result's first).
Prints the first violation and exits 1; prints "arena liveness ok: N buffers" otherwise.
"""
import json
import sys


def buffer_refs(value):
    """Every {"index": ..., "dtype": ...} buffer reference inside a step's fields."""
    if isinstance(value, dict):
        if "index" in value and "dtype" in value:
            yield value["index"]
        else:
            for v in value.values():
                yield from buffer_refs(v)
    elif isinstance(value, list):
        for v in value:
            yield from buffer_refs(v)


def main():
    plan = json.load(sys.stdin)
    buffers = plan["buffers"]
    last_step = len(plan["steps"]) - 1
    first, last = {}, {}
    for s, step in enumerate(plan["steps"]):
        for b in buffer_refs({k: v for k, v in step.items() if k not in ("name", "op", "nodes", "kind")}):
            first[b] = min(first.get(b, s), s)
            last[b] = max(last.get(b, s), s)
    for binding in plan["inputs"]:
        first[binding["buffer"]["index"]] = 0
    for binding in plan["outputs"]:
        last[binding["buffer"]["index"]] = last_step
    arena = [i for i, b in enumerate(buffers) if b["space"] == "arena" and i in first]
    for n, i in enumerate(arena):
        a = buffers[i]
        for j in arena[n + 1:]:
            b = buffers[j]
            bytes_overlap = a["offset"] < b["offset"] + b["bytes"] and b["offset"] < a["offset"] + a["bytes"]
            steps_overlap = first[i] <= last[j] and first[j] <= last[i]
            if not (bytes_overlap and steps_overlap):
                continue
            in_place = a["offset"] == b["offset"] and (last[i] == first[j] or last[j] == first[i])
            if in_place:
                continue
            print(f"buffer {i} '{a['name']}' (steps {first[i]}..{last[i]}, bytes {a['offset']}+{a['bytes']}) and "
                  f"buffer {j} '{b['name']}' (steps {first[j]}..{last[j]}, bytes {b['offset']}+{b['bytes']}) "
                  "are live at once in the same arena bytes")
            return 1
    print(f"arena liveness ok: {len(arena)} buffers")
    return 0


if __name__ == "__main__":
    sys.exit(main())
