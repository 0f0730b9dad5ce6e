"""`engramory doctor [ROOT]`: audit a whole memory store and report every problem, and
`engramory doctor --all`: every store Claude Code knows on this machine, one line each.

Exit status: 0 no errors, 1 errors (with --strict: errors or warnings), 2 usage error or a
root that cannot be read.
"""

from __future__ import annotations

import sys

from engramory import automemory
from engramory.commands.parser import Parser
from engramory.doctor.codes import CODES, ERROR, INFO, NO_SCHEMA_CODES, WARNING, Context, Finding, shown
from engramory.doctor.report import counts_of, exit_code, list_checks, render_text, report
from engramory.doctor.run import Capped, audit, audit_capped, claude_memory_dir
from engramory.exitcodes import EX_DOCTOR_FAILED, EX_OK
from engramory.store import discovery
from engramory.store.secrets import emit, emit_json

TYPE_CHECKING = False
if TYPE_CHECKING:
    import argparse
    from collections.abc import Mapping, Sequence


def _add_verify(root: str, findings: list[Finding] | Capped, skip: Sequence[str]) -> None:
    """`--verify`: the findings of engramory.verify.doctor_check, in sort order."""
    # imported here: a plain doctor loads no verify code (tests/unit/verify/test_doctor_check.py)
    from engramory.verify import doctor_check

    extra, said = doctor_check.findings(root, Context().today, skip=skip)
    if said:
        sys.stderr.write("engramory doctor: %s\n" % said)
    findings.extend(extra)
    if isinstance(findings, list):
        findings.sort(key=Finding.sort_key)


def main(argv: Sequence[str] | None = None) -> int:
    parser = Parser(
        prog="engramory doctor",
        usage_exit=EX_DOCTOR_FAILED,
        description="Audit a whole memory store: the index (caps, pointers), every note's frontmatter and "
        "body, links, orphans, duplicates, secrets (masked) and prompt injection. Report only: the "
        "doctor never changes a file.",
        epilog="Output: one line per finding, `path:line: severity code: message` (`path: ...` when it "
        "concerns the whole file or folder; line 0 in --json), sorted, then a summary line. `--list-checks` shows every code. "
        "With no ROOT the doctor checks this project's Claude Code auto-memory folder "
        "($CLAUDE_CONFIG_DIR or ~/.claude, then projects/<project path>/memory) and says which. "
        "Exit status: 0 no errors, 1 errors (with --strict, warnings too), 2 usage error or a "
        "ROOT that cannot be read.",
    )
    parser.add_root("the folder holding MEMORY.md")
    parser.add_argument("--json", action="store_true", help="print one JSON report (schemas/doctor-report.schema.json)")
    parser.add_argument("--strict", action="store_true", help="exit 1 on warnings as well as errors")
    parser.add_argument("--skip", action="append", default=[], metavar="CODE",
                        help="leave out findings with this code (repeatable), e.g. --skip store-in-git")
    parser.add_argument("--no-schema", action="store_true",
                        help="structure only, for adopting an existing store: skip the frontmatter and label "
                        "checks (%s)" % ", ".join(sorted(NO_SCHEMA_CODES)))
    parser.add_argument("--all", action="store_true",
                        help="audit every store Claude Code knows on this machine (each project's auto "
                        "memory, the autoMemoryDirectory of local then user settings, subagent agent-memory "
                        "folders): one summary line each; a project whose memory lies in two folders (another "
                        "spelling of its path, a move, a rename) gets store-split")
    parser.add_argument("--verify", action="store_true",
                        help="also check what the notes name in the code against the repository the store "
                        "describes (runs git; ref-stale, ref-moved, verified-old): what `engramory verify` reports")
    parser.add_argument("--list-checks", action="store_true", help="print every check code and exit")
    args = parser.parse_args(argv)
    if args.list_checks:
        sys.stdout.write(list_checks())
        return EX_OK
    _check_args(parser, args)
    if args.all:
        return int(audit_all(args.skip, args.json, args.strict))
    return _doctor_one(args)


def _check_args(parser: Parser, args: argparse.Namespace) -> None:
    """Usage errors (exit 2 via parser.error), and --no-schema turned into codes to skip."""
    unknown = [c for c in args.skip if c not in CODES]
    if unknown:
        parser.error("unknown check code %s for --skip (see --list-checks)" % ", ".join(repr(c[:40]) for c in unknown))
    if args.no_schema:
        args.skip = list(args.skip) + sorted(NO_SCHEMA_CODES)
    if args.all:
        if args.root is not None:
            parser.error("--all audits every known store: pass no ROOT with it")
        if args.verify:
            parser.error("--verify checks one store against its repository: pass no --all with it")


def _doctor_one(args: argparse.Namespace) -> int:
    """Audit the one store ROOT names (by default this project's Claude Code auto memory)."""
    chosen = "argument"
    root = args.root
    if root is None:
        try:
            root = claude_memory_dir()
        except ValueError as exc:
            emit("engramory doctor: cannot tell this project's memory folder: %s; pass ROOT\n" % exc, sys.stderr)
            return EX_DOCTOR_FAILED
        chosen = "claude-auto-memory"
        emit("engramory doctor: no ROOT given; checking this project's Claude Code auto memory: %s\n" % root, sys.stderr)
    try:
        st, findings = audit(root, Context(), args.skip) if args.json else audit_capped(root, Context(), args.skip)
    except OSError as exc:
        reason = exc.strerror or exc.__class__.__name__
        hint = "pass the folder that holds MEMORY.md" if chosen == "argument" else (
            "Claude Code has not written memory for this project yet; pass ROOT to check another folder")
        emit("engramory doctor: cannot read the store folder %s: %s; %s\n" % (root, reason, hint), sys.stderr)
        return EX_DOCTOR_FAILED
    if args.verify:
        _add_verify(root, findings, args.skip)
    for note in st.cap_notes:
        if note.startswith("the store config"):
            continue  # reported as config-invalid findings, with line numbers
        emit("engramory doctor: note: %s\n" % note, sys.stderr)
    if isinstance(findings, list):
        emit_json(report(findings, st, chosen, args.strict), indent=2)
    else:
        emit(render_text(findings, root, st))
    return exit_code(findings, args.strict)


def audit_all(skip: Sequence[str], as_json: bool, strict: bool, env: Mapping[str, str] | None = None,
              cwd: str | None = None) -> int:
    """Audit every known store: one summary line each (or one JSON report per line)."""
    stores = discovery.known_stores(env, cwd)
    if not stores:
        emit("engramory doctor: no memory store found under %s (no project has auto memory yet); pass ROOT to check "
             "a folder\n" % automemory.claude_config_dir(env), sys.stderr)
        return EX_OK
    split = discovery.splits(stores)
    worst = EX_OK
    for kind, folder in stores:
        if discovery.is_empty(folder):
            if not as_json:
                emit("%s: %s: empty, nothing stored yet\n" % (shown(folder), kind))
            continue
        try:
            st, findings = (audit(folder, Context(), skip, env) if as_json
                            else audit_capped(folder, Context(), skip, env))
        except OSError as exc:
            emit("engramory doctor: cannot read %s: %s\n" % (shown(folder), exc.strerror or exc), sys.stderr)
            worst = max(worst, 1)
            continue
        if folder in split and discovery.SPLIT_CODE not in skip:
            other, why = split[folder]
            findings.append(Finding(
                discovery.SPLIT_CODE, ".", 0,
                "this project's memory is split between %s and %s (%s), and a session loads only one of "
                "them; merge the notes into the folder the host uses now and remove the other"
                % (shown(other), shown(folder), why)))
        code = exit_code(findings, strict)
        worst = max(worst, code)
        if isinstance(findings, list):
            one = report(findings, st, "all", strict)
            one["kind"] = kind
            emit_json(one)
            continue
        c = counts_of(findings)
        top = sorted(findings.error_codes)[:3]
        emit("%s: %s: %d error%s, %d warning%s, %d info, %d live note%s%s\n" % (
            shown(folder), kind, c[ERROR], "" if c[ERROR] == 1 else "s",
            c[WARNING], "" if c[WARNING] == 1 else "s", c[INFO], len(st.live),
            "" if len(st.live) == 1 else "s", (" (%s)" % ", ".join(top)) if top else ""))
    if not as_json:
        emit("%d store%s checked; run `engramory doctor FOLDER` for the findings of one\n"
             % (len(stores), "" if len(stores) == 1 else "s"))
    return worst


if __name__ == "__main__":
    raise SystemExit(main())
