"""Library kernels into an Inductor output module: read a library file, splice matching kernels.

A kernel is substituted only where its fingerprint (fingerprint.py) equals a library entry's
exactly: same normalized source, same shapes, strides and dtypes at every launch, same device.
The entry's source (the winner as it was stitched and verified) goes inside the kernel's '''
literal, under this module's name for the kernel; every other byte of the module stays as
Inductor wrote it. Pure Python (sqlite3 and ast only), so it is tested anywhere.
"""
import hashlib
import os
import sqlite3

from kernelopt.library.fingerprint import inductor_fingerprints, rename_kernel

APPLICATION_ID = 0x4B4F4C42  # src/store/library.cpp: kApplicationId ("KOLB")
MAX_FORMAT = 1               # src/store/library.cpp: kLibraryVersion


class LibraryError(ValueError):
    """A library file that is missing, damaged or not a kernelopt library."""


def read_library(path):
    """{fingerprint: entry dict} of a library file's Inductor entries (id, fingerprint, kernel_name,
    source, source_hash, speedup, device). Raises LibraryError with one line naming the file."""
    if not os.path.isfile(path):
        raise LibraryError(f"{path}: no such library file")
    try:
        con = sqlite3.connect(f"file:{os.path.abspath(path)}?mode=ro", uri=True)
        try:
            app = con.execute("PRAGMA application_id").fetchone()[0]
            version = con.execute("PRAGMA user_version").fetchone()[0]
            if app != APPLICATION_ID:
                raise LibraryError(f"{path}: not a kernelopt library file")
            if version > MAX_FORMAT:
                raise LibraryError(f"{path}: library format {version} is newer than this kernelopt reads ({MAX_FORMAT})")
            rows = con.execute("SELECT id, fingerprint, kernel_name, source, source_hash, speedup, device "
                               "FROM entries WHERE input_kind = 'inductor' ORDER BY id").fetchall()
        finally:
            con.close()
    except sqlite3.DatabaseError as exc:
        raise LibraryError(f"{path}: not a kernelopt library file ({exc})") from None
    keys = ("id", "fingerprint", "kernel_name", "source", "source_hash", "speedup", "device")
    return {r[1]: dict(zip(keys, r)) for r in rows}


def _safe_literal_text(text, quote):
    """The C++ stitcher's rule (artifact/stitch.hpp): the text may not end or alter the literal."""
    return ("'''" not in text and '"""' not in text and "\\" not in text and "\0" not in text
            and not text.endswith(quote))


def substitute(source, artifact, entries, device_name):
    """(new source, [(kernel name, entry)]): source with every kernel whose fingerprint is in
    entries replaced by the entry's source (renamed to this module's kernel name). artifact is
    kernelopt.artifact.inductor.parse_module(source). Kernels without a match, and entries whose
    text could not sit inside the literal, leave the module unchanged there."""
    if not entries or not artifact["kernels"]:
        return source, []
    prints = inductor_fingerprints(source, artifact, device_name)
    raw = source.encode("utf-8")
    edits, used = [], []
    for k in artifact["kernels"]:
        entry = entries.get(prints[k["name"]])
        if entry is None:
            continue
        begin, end = k["source_span"]
        quote = raw[begin - 1:begin].decode("ascii")
        text = rename_kernel(entry["source"], entry["kernel_name"], k["name"])
        if hashlib.sha256(entry["source"].encode("utf-8")).hexdigest() != entry["source_hash"]:
            continue  # damaged in the file: never run a text other than the one verified
        if not _safe_literal_text(text, quote):
            continue
        edits.append((begin, end, text.encode("utf-8")))
        used.append((k["name"], entry))
    for begin, end, text in sorted(edits, reverse=True):
        raw = raw[:begin] + text + raw[end:]
    return raw.decode("utf-8"), used
