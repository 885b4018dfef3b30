"""Resuming an interrupted run from its `.partial`: what to keep, and the one record made of
the kept points and the rest.

The points a `.partial` holds are kept byte for byte; jostle-bench measures the others alone
(`--skip-points K`, into REST) and the two are spliced into one file whose meta is the first
run's, with the resumption appended to `resumed` (docs/records.md). jostle-bench writes a
point's lines in one write(2), so a stopped run's file holds whole points (a cut last line
is dropped).
"""

import json
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Optional

from ..errors import JostleError
from .results import parse_line, scan

REST_SUFFIX = ".rest"   # <name>.jsonl.rest[.partial]: the rest of a resumed run, while it runs


@dataclass
class Kept:
    meta: dict          # the first run's meta line
    lines: bytes        # its whole point lines, as they are in the file
    points: int         # how many points (groups of lines of the same params) they are
    line_count: int
    params: list        # the params of each kept point, in order


def keepable(partial: Path, same_run) -> Optional[Kept]:
    """What of PARTIAL a rerun keeps, or None: nothing (no point, damaged, or a meta for which
    SAME_RUN(meta) is false: made with other options, which a rerun would pass off as its own)."""
    try:
        meta, rows, _, _, _ = scan(partial)
        data = partial.read_bytes()
    except (JostleError, OSError):
        return None
    order = ((meta.get("harness") or {}).get("order") or {}).get("kind")
    # A shuffled order draws its seed anew, --keep-samples' points point into a samples
    # file of their own, and a point of `shift --links-per-point G` is up to G links of
    # params of their own (a count of params is not a count of points): none is continued
    # (measured anew).
    several = int((meta.get("options") or {}).get("links-per-point") or 1) > 1
    if not rows or not same_run(meta) or order == "shuffled" or "samples" in meta or several:
        return None
    whole = data[:data.rfind(b"\n") + 1].split(b"\n")[1:-1]   # whole lines after the meta
    kept, groups, last = [], [], None
    for line in whole:
        rec = parse_line(line.decode("utf-8"))
        if rec.get("type") != "point":
            break
        if rec["params"] != last:
            groups.append(rec["params"])
            last = rec["params"]
        kept.append(line + b"\n")
    if not groups:
        return None
    return Kept(meta, b"".join(kept), len(groups), len(kept), groups)


def rest_output(out: Path) -> Path:
    return out.with_name(out.name + REST_SUFFIX)


def splice(kept: Kept, rest: Path, dest: Path) -> bool:
    """DEST (written whole, then renamed) from KEPT and the record REST jostle-bench wrote of
    the other points; REST is removed. False when REST holds no meta line (the rest never
    started: nothing to splice)."""
    try:
        data = rest.read_bytes()
    except OSError:
        return False
    lines = data[:data.rfind(b"\n") + 1].split(b"\n")[:-1]
    if not lines:
        return False
    try:
        rest_meta = parse_line(lines[0].decode("utf-8"))
        recs = [parse_line(x.decode("utf-8")) for x in lines[1:]]
    except (ValueError, UnicodeDecodeError) as e:
        raise JostleError(f"{rest}: the resumed run's record cannot be read ({e})") from None
    points = [x + b"\n" for x, r in zip(lines[1:], recs) if r.get("type") == "point"]
    end = next((r for r in recs if r.get("type") == "end"), None)
    twice = {json.dumps(r["params"], sort_keys=True) for r in recs if r.get("type") == "point"} \
        & {json.dumps(p, sort_keys=True) for p in kept.params}
    if twice:   # the sweep changed under the resume: a point would be in the record twice
        raise JostleError(f"{rest}: the resumed run measured a point the .partial already holds "
                          f"({sorted(twice)[0]}); run again with --restart")
    meta = dict(kept.meta)
    meta["resumed"] = list(meta.get("resumed") or []) + [
        {"from_point": kept.points, "kept_lines": kept.line_count, "meta": rest_meta}]
    text = json.dumps(meta, separators=(",", ":")).encode() + b"\n" + kept.lines + b"".join(points)
    if end is not None:
        end = {**end, "points": kept.line_count + len(points)}
        text += json.dumps(end, separators=(",", ":")).encode() + b"\n"
    tmp = dest.with_name(dest.name + ".tmp")
    with open(tmp, "wb") as f:
        f.write(text)
        f.flush()
        os.fsync(f.fileno())
    os.replace(tmp, dest)
    rest.unlink()
    return True
