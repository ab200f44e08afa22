"""The fuzzing harness (benchmarks/fuzz_inputs.py) as a test: a short fixed-seed
slice over every input format, every failure the full runs found kept as a named regression case,
and a sample of inputs confirmed as real processes.

The property of each input (in-process ``main([...])``): success -- with the seed's result when
only harmless edits were made -- or exit 2 with one line on stderr, no traceback, nothing written,
no database row changed.
"""

from __future__ import annotations

import io
import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from projectpaths import ROOT

from benchmarks.fuzz_inputs import FAILURES, FORMATS, Runner, run_chunk

# inputs per format in the CI slice (study-spec's successes create a study: slower)
SLICE = {name: 6 if name == "study-spec" else 16 for name in FORMATS}


@pytest.fixture(scope="module")
def runner(tmp_path_factory):
    saved = dict(os.environ)
    runner = Runner(tmp_path_factory.mktemp("fuzz"))
    yield runner
    runner.close()
    os.environ.clear()
    os.environ.update(saved)


@pytest.mark.parametrize("name", list(FORMATS))
def test_a_fixed_seed_slice_of_every_format_keeps_the_property(runner, name):
    findings: list = []
    counts = run_chunk(runner, FORMATS[name], SLICE[name], seed=31, findings=findings)
    assert sum(counts.values()) == SLICE[name]
    assert not findings, [(outcome, detail) for _f, outcome, detail, _d in findings]
    assert all(counts[o] == 0 for o in FAILURES)
    assert counts["refused"] > 0  # the generators do make bad inputs the readers catch


# ------------------------------------------------------------------ regression cases of the full runs
def _npy(array) -> bytes:
    buf = io.BytesIO()
    np.save(buf, array)
    return buf.getvalue()


def _npz(**arrays) -> bytes:
    buf = io.BytesIO()
    np.savez(buf, **arrays)
    return buf.getvalue()


def _unknown_compression(backup: bytes) -> bytes:
    """The backup with its first entry's compression method set to 99 (local and central header)."""
    data = bytearray(backup)
    local = data.index(b"PK\x03\x04")
    central = data.index(b"PK\x01\x02")
    data[local + 8:local + 10] = (99).to_bytes(2, "little")
    data[central + 10:central + 12] = (99).to_bytes(2, "little")
    return bytes(data)


def _encrypted_entry(backup: bytes) -> bytes:
    """The backup with its first entry marked encrypted (flag bit 0, local and central header)."""
    data = bytearray(backup)
    local = data.index(b"PK\x03\x04")
    central = data.index(b"PK\x01\x02")
    data[local + 6] |= 0x1
    data[central + 8] |= 0x1
    return bytes(data)


def _npy_header_with_escape(_seed: bytes) -> bytes:
    """A valid float32 .npy whose header spells a key with an invalid escape ('sh\\Iape'):
    numpy's literal_eval of the header warned (DeprecationWarning) before refusing it."""
    valid = _npy(EMB)
    edited = valid.replace(b"'shape'", b"'sh\\Iape'", 1).replace(b"}  ", b"}", 1)   # same header length
    assert len(edited) == len(valid)
    return edited


def _zip_version_too_new(backup: bytes) -> bytes:
    """The backup whose first central directory entry needs zip version 14.8 to extract."""
    data = bytearray(backup)
    central = data.index(b"PK\x01\x02")
    data[central + 6:central + 8] = (148).to_bytes(2, "little")
    return bytes(data)


def _manifest_without(backup: bytes, key: str) -> bytes:
    import zipfile
    with zipfile.ZipFile(io.BytesIO(backup)) as zf:
        members = {n: zf.read(n) for n in zf.namelist()}
    manifest = json.loads(members["manifest.json"])
    del manifest[key]
    members["manifest.json"] = json.dumps(manifest).encode()
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", compression=zipfile.ZIP_DEFLATED) as zf:
        for name, data in members.items():
            zf.writestr(name, data)
    return buf.getvalue()


def _huge_bytearray8() -> bytes:
    """The world's V-COCO detections, mutated: a BYTEARRAY8 opcode (0x96) in place of a MEMOIZE
    claims 5.4e18 bytes (the next eight bytes) -- the input the full run found."""
    return (b"\x80\x04\x95{\x00\x00\x00\x00\x00\x00\x00]\x94}\x94(\x8c\x08image_id\x94K\x01\x8c\nperson_box\x96]"
            b"\x94(K\x00K\x00K\x1dK;e\x8c\nhold_agent\x94G?\xeco\xc7l4\xec\xcc\xcc\xcc\xcc\xcc\xcd\x8c\x08hold_obj"
            b"\x94]\x94(K\x14K\x14K\x1dK\x1dG?\xe9\x99\x99\x99\x99\x99\x9ae\x8c\x0bstand_agent\x94G?\xe6fff-1fua.")


# a truncated .npy whose header NumPy reads only with its Python 2 fix-ups (a UserWarning, then the
# refusal: two lines) -- the input the full run found
NPY_PYTHON2_HEADER = bytes.fromhex(
    "934e554d5059010076007b276465736372273a20273c6634272c2027666f727472616e5f6f72646572273a2046616c73"
    "652c20277368617065273a202831362c2034292c207d20200a2020202020202020202020202020202020202020202020"
    "20202020202020202020202020202020202020202020202020202020202020200a3536823f7444283dd758873c7c7185"
    "bdb96a393d57db823fa1efdbbca606ee3c3054953c0ef4703c912e803f03efdf3c67d316bdb17405bce079c5bc26d583"
    "3f1541803fa0946fbc862220bd1fb152bc4071d539e8787c3f1b83843d592d4e3dc0cf0abe596fc1bd4fc37d3f4e614e"
    "e0edacbc2f042f3cb607323cdfddd83d21c4713faa2a7b3f082ed13ddd71043d9ecb073d7989d2bc96e76a3fe72f093c"
    "d39bb23b985c7bbdc1ec0bbded137f3f327c41bd6901a1bb7c709c3bcc37e93afc84793fcccc833fd082363d626b833c"
    "d49227bda7d7153de294793f560d343d87805bbd6b483b3de47c83ba1a04703fbf9280bc4848313b7e785f3cf22649")
EMB = np.load(io.BytesIO(FORMATS["embeddings-npy"].seeds[0])).astype(np.float64)
EMB_HUGE = EMB.copy()
EMB_HUGE[6, 1] = 1e300
EMB_SNAN = np.load(io.BytesIO(FORMATS["embeddings-npy"].seeds[0]))
EMB_SNAN.view(np.uint32)[7, 3] = 0x7F9CC2C2  # a signalling NaN: NumPy warned while taking the row norms

# name -> (format, input bytes or a function of the world's valid backup, outcome, piece of its line)
REGRESSIONS = {
    "pickle-bytearray8-of-2-62-bytes": ("vcoco-pickle", _huge_bytearray8(), "refused", "more memory"),
    # LONG_BINPUT at index 335,544,320: CPython zero-fills a memo of 2.7 GB (the full run's
    # process, at a higher index, was killed by the kernel's OOM killer at 22 GB)
    "pickle-memo-index-in-the-hundreds-of-millions": ("vcoco-pickle", b"\x80\x02]r" + (0x14000000).to_bytes(4, "little")
                                                      + b".", "refused", "more memory"),
    "backup-entry-encrypted": ("backup-zip", _encrypted_entry, "refused", "is encrypted"),
    "backup-zip-version-14-8": ("backup-zip", _zip_version_too_new, "refused", "zip file version 14.8"),
    "embeddings-header-with-an-invalid-escape": ("embeddings-npy", _npy_header_with_escape, "refused",
                                                 "not a .npy array"),
    "backup-entry-unknown-compression-method": ("backup-zip", _unknown_compression, "refused",
                                                "compression method 99"),
    "embeddings-float64-beyond-float32": ("embeddings-npy", _npy(EMB_HUGE), "refused", "row 6"),
    "matrix-npz-score-beyond-float32": ("matrix-npz", _npz(labels=np.array(["ride.v.01", "hold.v.01"]),
                                                           scores=np.array([[4.0, 1e300], [1e300, 4.0]])),
                                        "refused", "1e+300 outside the 0–4 scale"),
    "llm-content-a-number": ("llm-answers", json.dumps({"choices": [{"message": {"content": 5}}]}).encode(),
                             "refused", "bad JSON body"),
    "llm-usage-a-string": ("llm-answers", json.dumps({"choices": [{"message": {"content": "3"}}],
                                                      "usage": "x"}).encode(), "refused", "bad JSON body"),
    "llm-token-count-text": ("llm-answers", json.dumps({"choices": [{"message": {"content": "3"}}],
                                                        "usage": {"prompt_tokens": "many"}}).encode(), "ok", ""),
    "embeddings-float32-signalling-nan": ("embeddings-npy", _npy(EMB_SNAN), "refused", "row 7"),
    "matrix-csv-header-of-form-feeds": ("matrix-csv", b"a\x0cb\x0cb\x0cb\x0cb\x0cb", "refused",
                                        "found a\\x0cb\\x0cb"),
    "matrix-csv-a-single-space": ("matrix-csv", b" ", "refused", "line 1: the header line is blank"),
    "ratings-csv-header-of-tabs-after-a-blank-line": ("ratings-csv", b"\n\t\t\n", "refused",
                                                      "line 2: the header line is blank"),
    "ratings-rating-of-400-digits": ("ratings-csv", FORMATS["ratings-csv"].seeds[0] + b"s,i0,ann9," + b"9" * 400
                                     + b",2030-01-01\n", "refused", "line 74: rating"),
    "qpic-object-category-a-list": ("detections-qpic", FORMATS["detections-qpic"].seeds[0].replace(
        b'"category_id": 19', b'"category_id": [1, "a"]'), "refused", "annotations[1].category_id: [1, 'a']"),
    "spec-sampler-w-of-400-digits": ("study-spec", FORMATS["study-spec"].seeds[1].replace(b"w = 0.5", b"w = " + b"1" * 400),
                                     "refused", "key 'items.w' must be a finite number"),
    "backup-manifest-without-created-at": ("backup-zip", lambda backup: _manifest_without(backup, "created_at"),
                                           "refused", "manifest.json: field created_at must be a string"),
    "embeddings-header-of-python-2": ("embeddings-npy", NPY_PYTHON2_HEADER, "refused", "not a .npy array"),
    "embeddings-complex": ("embeddings-npy", _npy(EMB.astype(complex) + 1j), "refused", "complex numbers"),
    # every row the same (the run's input: 16 rows of 0.00017664): K-Means with k = 2 finds one
    # distinct cluster and warns before the k is skipped -- the warning made the refusal two lines
    "embeddings-all-rows-equal": ("embeddings-npy", _npy(np.full_like(EMB, 0.00017664, dtype=np.float32)),
                                  "refused", "step 2: no k = int("),
    # float32 denormals (1e-45): their float32 norm underflows to 0 and the rows were refused as
    # "all zeros"; cosine clustering only needs their direction, which float64 keeps
    "embeddings-denormal-rows": ("embeddings-npy", _npy((np.sign(EMB) * 1e-45).astype(np.float32)), "ok", ""),
    "crosshoi-released-box-list-a-number": ("crosshoi-answers", json.dumps(
        {"q1": {"ao_names": ["ride a/an horse"], "ho_scores": [0.9], "h_boxes": 5}}).encode(), "refused",
        "h_boxes must be a list"),
    "answer-route-seen-ms-of-400-digits": ("answer-route", lambda seed: seed.replace(b'"seen_ms": 900', b'"seen_ms": 1' + b"0" * 400),
                                           "refused", "field 'seen_ms' must be a number of milliseconds"),
}


@pytest.mark.parametrize("case", list(REGRESSIONS))
def test_fuzz_regression(runner, case):
    name, data, expected, piece = REGRESSIONS[case]
    fmt = FORMATS[name]
    if callable(data):
        data = data(fmt.seeds[0])
    outcome, detail, _result = runner.run(fmt, data)
    runner.restore_target(fmt)
    assert outcome == expected, detail
    assert piece in detail


def test_the_harness_catches_a_traceback_and_a_partial_write(runner, monkeypatch):
    """The property can fail: a reader that raises a bug, and one that writes before refusing."""
    import metrics.commands._mcq as mcq
    from metrics.core._errors import InputError

    fmt = FORMATS["crosshoi-answers"]

    def broken(args):
        raise ZeroDivisionError("a bug")
    monkeypatch.setattr(mcq, "run", broken)
    outcome, detail, _ = runner.run(fmt, fmt.seeds[0])
    assert outcome == "tracebacks" and "ZeroDivisionError" in detail

    def writes_then_refuses(args):
        Path(args.json).parent.mkdir(parents=True, exist_ok=True)
        Path(args.json).write_text("{}")
        raise InputError("refused after writing")
    monkeypatch.setattr(mcq, "run", writes_then_refuses)
    outcome, _detail, _ = runner.run(fmt, fmt.seeds[0])
    assert outcome == "partial_writes"


@pytest.mark.parametrize("signal_error", [KeyboardInterrupt(), KeyboardInterrupt("terminated")])
def test_ctrl_c_or_sigterm_during_a_command_stops_the_harness(runner, monkeypatch, signal_error):
    """The commands turn Ctrl-C and SIGTERM into a one-line refusal; the harness must stop on
    it, not count it as a refused input (SIGTERM's "terminated" once kept a run going)."""
    import metrics.commands._mcq as mcq

    def interrupted(args):
        raise signal_error
    monkeypatch.setattr(mcq, "run", interrupted)
    fmt = FORMATS["crosshoi-answers"]
    with pytest.raises(KeyboardInterrupt):
        runner.run(fmt, fmt.seeds[0])


@pytest.mark.parametrize("case", ["pickle-bytearray8-of-2-62-bytes", "backup-entry-unknown-compression-method",
                                  "matrix-csv-header-of-form-feeds",
                                  "embeddings-float64-beyond-float32", "embeddings-all-rows-equal"])
def test_regressions_as_real_processes(runner, tmp_path, case):
    """A sample confirmed outside the harness: the command as the user runs it."""
    from faults import expand
    name, data, _expected, piece = REGRESSIONS[case]
    fmt = FORMATS[name]
    if callable(data):
        data = data(fmt.seeds[0])
    target = tmp_path / fmt.target
    target.write_bytes(data)
    names = {**runner.names, fmt.target: str(target), "out": str(tmp_path / "out")}
    done = subprocess.run([sys.executable, "-m", fmt.module, *expand(fmt.argv, names)], cwd=ROOT,
                          capture_output=True, text=True, timeout=300,
                          env={**os.environ, "STUDYAPP_DB": runner.names["studyapp.sqlite"]})
    assert done.returncode == 2, done.stderr
    assert len(done.stderr.strip().splitlines()) == 1 and "Traceback" not in done.stderr, done.stderr
    assert piece in done.stderr
    assert not (tmp_path / "out").exists()


def test_workers_split_the_formats_by_cost_and_merge_the_same_counts(tmp_path):
    """``--workers 2``: the formats in two groups of about equal CPU time, run as two processes
    whose reports merge into ``--report``; an input depends on its format and the seed, not on the
    split, so the counts equal a one-process run's."""
    from benchmarks.fuzz_inputs import worker_groups

    groups = worker_groups(["backup-zip", "study-spec", "ratings-csv", "items-csv", "llm-answers"], 2)
    assert groups == [["backup-zip", "items-csv"], ["study-spec", "ratings-csv", "llm-answers"]]  # 33+10 / 22+11+4
    assert worker_groups(["llm-answers"], 4) == [["llm-answers"]]

    def run(workers: int) -> dict:
        report = tmp_path / f"r{workers}.json"
        done = subprocess.run([sys.executable, "-m", "benchmarks.fuzz_inputs", "--n", "6", "--seed", "5",
                               "--formats", "llm-answers,imsitu-clusters,matrix-csv", "--workers", str(workers),
                               "--report", str(report), "--failures", str(tmp_path / "f")],
                              cwd=ROOT, capture_output=True, text=True, timeout=300)
        assert done.returncode == 0, done.stderr[-2000:]
        return {name: {k: v for k, v in entry.items() if k != "seconds"}
                for name, entry in json.loads(report.read_text()).items() if name != "load"}

    split, single = run(2), run(1)
    assert split == single and set(split) == {"llm-answers", "imsitu-clusters", "matrix-csv"}
    assert all(entry["inputs"] == 6 and entry["ok"] + entry["refused"] == 6 for entry in split.values())
