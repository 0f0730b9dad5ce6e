"""Hold the guard's Hermes emulation (what the shell hook uses, outside Hermes) against the
real Hermes tools, in Hermes's own Python.

    <hermes venv>/bin/python compare_emulation.py <bundle root> <work folder> <results.json> [seed]

Generates write_file, replace-mode and V4A patch calls over index files with LF, CRLF, a
BOM, no final newline..., predicts each with engramory.hosts.hermes while it believes it is
outside Hermes, then runs the real tool (model_tools.handle_function_call, no plugin
loaded) and records both. The test asserts: where the emulation claims an exact result,
Hermes wrote exactly those bytes; where it says Hermes refuses, Hermes refused and wrote
nothing.
"""

import json
import os
import random
import sys


def main():
    root, work, out_path = sys.argv[1], sys.argv[2], sys.argv[3]
    seed = int(sys.argv[4]) if len(sys.argv) > 4 else 1
    sys.path.insert(0, root)
    import model_tools

    from engramory import edits
    from engramory.hosts import hermes as adapter
    from engramory.hosts.hermes import v4a

    rnd = random.Random(seed)
    env = {"TERMINAL_CWD": work, "HERMES_HOME": os.environ["HERMES_HOME"]}
    words = ["alpha", "beta", "gamma", "delta", "tab\there", "say \u201chi\u201d", "caf\u00e9", "x", "  indented", "- [n](n.md)"]

    def text_lines(n):
        return ["- %s %d" % (rnd.choice(words), i) for i in range(n)]

    def make_before(kind, lines):
        nl = "\r\n" if "crlf" in kind else "\n"
        body = nl.join(lines) + ("" if "noeol" in kind else nl)
        data = body.encode("utf-8")
        return (b"\xef\xbb\xbf" + data) if "bom" in kind else data

    kinds = ["lf", "crlf", "bom-lf", "bom-crlf", "lf-noeol", "crlf-noeol"]
    results = []
    for n in range(int(os.environ.get("COMPARE_CASES", "60"))):
        kind = rnd.choice(kinds)
        lines = text_lines(rnd.randint(1, 12))
        before = make_before(kind, lines) if rnd.random() > 0.08 else None
        folder = os.path.join(work, "c%d" % n)
        os.makedirs(folder)
        path = os.path.join(folder, "MEMORY.md")
        if before is not None:
            with open(path, "wb") as f:
                f.write(before)
        op = rnd.choice(["write", "replace", "replace", "v4a", "v4a"])
        predicted, estimated, refused, deleted, untouched = None, False, False, False, False
        if op == "write":
            content = "\n".join(text_lines(rnd.randint(0, 6)))
            content += rnd.choice(["", "\n", "\r\n", "\r"])
            if rnd.random() < 0.2:
                content = "\ufeff" + content
            args = {"path": path, "content": content}
            tool = "write_file"
            predicted = adapter.write_bytes(before, content)
        elif op == "replace":
            tool = "patch"
            pick = rnd.randint(0, len(lines) - 1)
            span = lines[pick : pick + rnd.randint(1, 2)]
            old = "\n".join(span) + rnd.choice(["", "\n"])
            if rnd.random() < 0.15:
                old = rnd.choice(["- ", "", lines[pick][:3]])  # ambiguous or empty
            new = "\n".join(text_lines(rnd.randint(0, 3))) + rnd.choice(["", "\n", "\\t"])
            flag = rnd.choice([False, False, True, "true", "false"])
            args = {"mode": "replace", "path": path, "old_string": old, "new_string": new, "replace_all": flag}
            predicted, estimated = adapter.predict_replace(before, old, new, flag, None)
            refused = predicted is None
        else:
            tool = "patch"
            rel = os.path.relpath(path, work)
            shape = rnd.choice(["update", "update", "append", "hint", "add", "move", "delete"])
            if shape == "update":
                i = rnd.randint(0, len(lines) - 1)
                body = [" " + lines[j] for j in range(max(0, i - 1), i)] + ["-" + lines[i]] + ["+" + x for x in text_lines(rnd.randint(0, 3))]
                patch = ["*** Update File: " + rel, "@@"] + body
            elif shape == "append":
                patch = ["*** Update File: " + rel, "@@"] + ["+" + x for x in text_lines(rnd.randint(1, 3))]
            elif shape == "hint":
                patch = ["*** Update File: " + rel, "@@ %s @@" % rnd.choice(lines)] + ["+" + x for x in text_lines(2)]
            elif shape == "add":
                rel = os.path.join(os.path.dirname(rel), "new", "MEMORY.md")
                patch = ["*** Add File: " + rel] + ["+" + x for x in text_lines(rnd.randint(1, 5))]
            elif shape == "move":
                src = os.path.join(folder, "src.md")
                with open(src, "wb") as f:
                    f.write(make_before(kind, text_lines(4)))
                rel = os.path.join(os.path.dirname(rel), "moved", "MEMORY.md")
                patch = ["*** Move File: %s -> %s" % (os.path.relpath(src, work), rel)]
            else:
                patch = ["*** Delete File: " + rel]
            text = "*** Begin Patch\n" + "\n".join(patch) + "\n*** End Patch"
            args = {"mode": "patch", "patch": text}
            path = os.path.join(work, rel)
            notes = []
            reqs = v4a.patch_emulated(adapter, tool, text, [work], env, notes)
            mine = [(r, e) for r, e in reqs if r.path == path]
            if not reqs:
                refused = True
            elif mine:
                req, estimated = mine[0]
                current = None
                if os.path.exists(path):
                    with open(path, "rb") as f:
                        current = f.read()
                predicted = edits.predict(req, current) if req.kind == edits.WRITE else None
                deleted = req.kind == edits.DELETE
            else:
                untouched = True  # the emulation says Hermes leaves this file as it is
        try:
            with open(path, "rb") as f:
                path_before = f.read().hex()
        except FileNotFoundError:
            path_before = None
        result = model_tools.handle_function_call(tool, args, task_id="cmp", tool_call_id="c%d" % n, session_id="cmp")
        try:
            with open(path, "rb") as f:
                actual = f.read().hex()
        except FileNotFoundError:
            actual = None
        failed = bool(json.loads(result).get("error"))
        results.append({
            "n": n, "op": op, "kind": kind, "args": args, "before": before.hex() if before is not None else None,
            "predicted": predicted.hex() if predicted is not None else None, "estimated": estimated,
            "refused": refused, "deleted": deleted, "untouched": untouched, "failed": failed,
            "result": result[:300], "actual": actual, "path_before": path_before,
        })
    with open(out_path, "w", encoding="utf-8") as f:
        json.dump(results, f)
    os._exit(0)


if __name__ == "__main__":
    main()
