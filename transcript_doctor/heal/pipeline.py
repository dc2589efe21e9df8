"""The heal pipeline: scan, plan (the store), preview, back up, write, re-verify, restore.

Stages for one store (docs/heal.md §Stages):

1. scan with the selected rules; keep the findings whose fix may be applied (`allowed`);
2. the store plans (`Store.plan_heal`): its edits, how to write them, and, when it verified the
   healed content itself, a view of it that is scanned here before anything is written;
3. dry run: report the plan (diff / SQL); `--output`: write a healed copy;
4. `--in-place`: refuse what must not be rewritten, remove stale temporaries of an earlier killed
   run, back up (a private copy under --no-backup), write atomically (files) or in one
   transaction (databases), re-scan, restore the copy if a fixed finding survived.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any, NoReturn

from ..core import ScanConfig, check_store
from ..model import Finding, RefusedError, TdocError
from ..stores import HealOptions, HealResult, Store, open_store
from ..value_types import replace
from . import backup as backups
from . import database
from .files import TempSpool
from .inuse import writers
from .plan import HealPlan, SqlWrite
from .writing import Target, output_file, output_unchanged, preview, replace_lines, restore_file


def allowed(f: Finding, options: HealOptions) -> bool:
    if f.fix is None or not f.fix.edits:
        return False
    return f.fix.applicability == "safe" or (options.unsafe_fixes and f.fix.applicability == "unsafe")


def needs_unsafe(f: Finding, options: HealOptions) -> bool:
    return bool(f.fix and f.fix.edits and f.fix.applicability == "unsafe" and not options.unsafe_fixes)


def identity(f: Finding) -> tuple[Any, ...]:
    """What stays the same about a finding when lines shift: code, session and the subject the
    store gave it (step, call id, message id, row); the message when it gave none."""
    subject = f.subject if f.subject is not None else f.row if f.row is not None else f.message
    return (f.code, f.session, str(subject))


def heal_one(path: Path, display: str, config: ScanConfig, options: HealOptions) -> HealResult:
    """Heal one input: open it, scan it with the selected rules, and heal what was found."""
    # a heal in any mode refuses a store that changes while it works; a writing heal reports the
    # findings of what it wrote, so the store may skip what only unfixable findings need
    writing = options.mode != "dry-run"
    config = replace(config, options=replace(config.options, fingerprint=True, for_writing_heal=writing))
    read_as = _status(path) if display != "-" else None
    store = open_store(path, display, config.options, config.input_format)
    try:
        findings = check_store(store, config, config.codes(display))
        return heal_findings(store, findings, config, options, read_as=read_as)
    finally:
        store.close()


def heal_findings(store: Store, findings: list[Finding], config: ScanConfig, options: HealOptions, *,
                  read_as: os.stat_result | None = None) -> HealResult:
    """The stages after the scan, for an open store and its findings (the library entry point).

    `config` selects the rules of the re-scan; `read_as`: the store file's status before it was
    read, when known. The store may be closed on return."""
    if options.mode == "output" and options.output is not None:
        options = replace(options, output=_output_target(options.output))
    spool = _spool_for(store, options)
    try:
        return _heal(store, findings, config, replace(options, spool=spool), read_as)
    finally:
        if spool is not None:
            spool.discard()  # unless it was renamed into place


def _output_target(output: Path) -> Path:
    """Where `--output` writes: the path, or through a symlink the file it names. Anything but a
    regular file already there (a device such as /dev/null, a FIFO, a directory) is refused: the
    heal replaces the file, reads it back, and removes it if the check fails."""
    import stat

    try:
        st = os.stat(output)
    except FileNotFoundError:
        return output
    except OSError as exc:
        raise TdocError(f"--output {output}: {exc.strerror or exc}") from None
    if not stat.S_ISREG(st.st_mode):
        raise TdocError(f"--output {output}: not a regular file; heal writes a store file (choose a file path)")
    return Path(os.path.realpath(output))


def _status(path: Path) -> os.stat_result | None:
    try:
        return os.stat(path)
    except OSError:
        return None  # opening it says why


def _spool_for(store: Store, options: HealOptions) -> TempSpool | None:
    """The temporary file a writing heal may have the store fill while it verifies (one pass)."""
    if options.mode == "output" and options.output is not None:
        return TempSpool(options.output)
    if options.mode == "in-place" and store.display != "-":
        return TempSpool(Path(store.path))
    return None


def _heal(store: Store, findings: list[Finding], config: ScanConfig, options: HealOptions,
          read_as: os.stat_result | None) -> HealResult:
    fixable = [f for f in findings if allowed(f, options)]
    unsafe = sum(1 for f in findings if needs_unsafe(f, options))
    cleaned = _remove_stale(store, options)
    if not fixable:
        result = HealResult(path=store.display, format=store.format, remaining=findings, needs_unsafe=unsafe,
                            warnings=cleaned)
        _output_unchanged(store, options, result, read_as)
        return result
    plan = store.plan_heal(fixable, options)
    result = _result(store, plan, options)
    result.needs_unsafe = unsafe
    result.warnings[:0] = cleaned
    applied = {id(f) for f in plan.applied}
    result.remaining = [f for f in findings if id(f) not in applied]
    if plan.write is None:
        _output_unchanged(store, options, result, read_as)
        return result
    if plan.verified:
        result.remaining = _check_verified(store, plan, config, store.display, options)
    if options.mode == "dry-run":
        if plan.remaining is not None:
            result.remaining = plan.remaining
        return result
    made = _write(store, plan, options, result)
    store.close()
    try:
        if not plan.verified:
            _reverify(result, store, plan, config, options, made)
    finally:
        if made is not None:
            made.discard()
    return result


def _output_unchanged(store: Store, options: HealOptions, result: HealResult, read_as: os.stat_result | None) -> None:
    """`--output` when the plan changes nothing: the store copied there as it is. A file whose size
    or modification time is no longer what they were before it was read (`read_as`) changed
    since: its copy would hold what the scan did not see, so it is removed (exit 3)."""
    if options.mode != "output" or options.output is None:
        return
    output = options.output
    copied_database = output_unchanged(store, output)
    if read_as is not None and not copied_database:
        try:
            now = os.stat(store.path)
            changed = (now.st_size, now.st_mtime_ns) != (read_as.st_size, read_as.st_mtime_ns)
        except OSError:
            changed = True
        if changed:
            output.unlink(missing_ok=True)
            raise RefusedError(f"{store.display}: changed while tdoc was working (is the agent still running?); "
                               f"no copy left at {output}")
    result.output, result.written = str(output), True


def _remove_stale(store: Store, options: HealOptions) -> list[str]:
    """`--in-place` first removes what an interrupted heal of this file left behind."""
    if options.mode != "in-place" or store.display == "-":
        return []
    stale = backups.remove_stale(Path(store.path), options.backup_dir)
    return [f"removed {len(stale)} leftover temporary file(s) of an interrupted heal"] if stale else []


def _result(store: Store, plan: HealPlan, options: HealOptions) -> HealResult:
    result = HealResult(path=store.display, format=store.format, changed=plan.write is not None,
                        applied=list(plan.applied), skipped=list(plan.skipped), warnings=plan.warnings,
                        edits=[e.as_dict() for e in plan.edits], extra=dict(plan.extra), kept=set(plan.kept))
    if plan.write is not None:
        result.diff = preview(store, plan, options)
    return result


def _check_verified(store: Store, plan: HealPlan, config: ScanConfig, display: str,
                    options: HealOptions) -> list[Finding]:
    """Scan the store's verified healed content: no fixed finding may survive in it."""
    if plan.healed is None:
        return []
    remaining = check_store(plan.healed, config, config.codes(display))
    survivors = _survivors(remaining, plan, options)
    if survivors:
        raise TdocError(f"{store.display}: {survivors[0].code} would survive this heal; nothing written")
    return remaining


def _survivors(remaining: list[Finding], plan: HealPlan, options: HealOptions) -> list[Finding]:
    fixed = {identity(f) for f in plan.applied}
    return [f for f in remaining if allowed(f, options) and identity(f) in fixed and f.subject not in plan.kept]


# --------------------------------------------------------------------------- writing


def _write(store: Store, plan: HealPlan, options: HealOptions, result: HealResult) -> backups.Backup | None:
    """Write the plan; returns the copy of the original (public backup or private copy)."""
    path = Path(store.path)
    if options.mode == "output":
        if options.output is None:
            raise TdocError("--output needs a path")
        output_file(store, plan, options.output, options.spool)
        result.output, result.written = str(options.output), True
        return None
    if store.display == "-":
        raise TdocError("standard input cannot be healed in place; use --output PATH (or a dry run)")
    target = Target.of(path, options, plan)
    if isinstance(plan.write, SqlWrite):
        made = _run_sql(path, plan.write, target)
    else:
        if not options.force:
            _refuse_open_writers(path)
        made = target.file_backup()
        try:
            replace_lines(store, plan, target, options.spool)
        except BaseException:
            made.private = True  # the original is untouched: its copy is not needed
            made.discard()
            raise
    result.written, result.output = True, str(path)
    if made is not None and not made.private:
        result.backup = str(made.path)
        if options.backup_dir is not None:
            backups.record(options.backup_dir, path, made, store.format)
    return made


def _refuse_open_writers(path: Path) -> None:
    """A process that keeps the file open for writing would lose every later write (docs/heal.md
    §What a running writer loses)."""
    pids = writers(path)
    if pids:
        raise RefusedError(f"{path}: another process has it open for writing (pid {', '.join(map(str, pids))}); "
                           "its later writes would be lost. Stop it first, or pass --force")


def _run_sql(path: Path, write: SqlWrite, target: Target) -> backups.Backup | None:
    taken: list[backups.Backup] = []

    def take(reader: Any) -> backups.Backup:
        taken.append(target.database_backup(reader))
        return taken[-1]

    try:
        return database.run(path, write, take)
    except BaseException:
        for copy in taken:  # rolled back: the database is unchanged, its copy not needed
            copy.private = True
            copy.discard()
        raise


def _reverify(result: HealResult, store: Store, plan: HealPlan, config: ScanConfig, options: HealOptions,
              made: backups.Backup | None) -> None:
    """Scan what was written (as the input's format: a healed store may hold too little for the
    sniffers to name it); a fixed finding that survived, or content that cannot be read back,
    restores the original (or removes the output)."""
    target = Path(result.output or store.path)
    try:
        after = open_store(target, result.output or store.display, config.options,
                           config.input_format or store.format)
        try:
            remaining = check_store(after, config, config.codes(store.display))
        finally:
            after.close()
    except RefusedError:
        raise
    except TdocError as exc:
        _undo(result, store, plan, options, made, f"the healed content cannot be read back ({exc})")
    result.remaining = remaining
    survivors = _survivors(remaining, plan, options)
    if survivors:
        _undo(result, store, plan, options, made, f"{survivors[0].code} survived the heal")


def _undo(result: HealResult, store: Store, plan: HealPlan, options: HealOptions, made: backups.Backup | None,
          why: str) -> NoReturn:
    """Take back what a heal wrote that failed its re-verification, and say why (exit 2)."""
    if options.mode != "in-place":
        Path(result.output).unlink(missing_ok=True)  # type: ignore[arg-type]
        raise TdocError(f"{result.output}: {why}; the output was removed")
    if made is None:
        raise TdocError(f"{store.display}: {why} and there is no copy to restore")
    if isinstance(plan.write, SqlWrite):
        database.restore(Path(store.path), made.path)
    else:
        restore_file(Path(store.path), made.path)
    where = "a private copy" if made.private else str(made.path)
    raise TdocError(f"{store.display}: {why}; the original was restored from {where}")
