"""Hostile checkpoint files: every one must raise CheckpointError (a RuntimeError) naming what
is wrong, never an internal error (TypeError, KeyError, RecursionError, MemoryError...) and
never run code. Files are built by hand (``craft``), with checksums made to match so that the
checks behind them are reached, and by mutating valid files at random."""

from __future__ import annotations

import io
import json
import pickle
import struct
import zlib

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import chainrule
from chainrule.serialization import CheckpointError, CheckpointIntegrityError, load, save

settings.register_profile(
    "ci", max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow]
)
settings.load_profile("ci")

F32 = np.arange(4, dtype=np.float32)


def _canonical(entries, meta):
    rest = {k: v for k, v in meta.items() if k != "header_crc32"}
    blob = {"tensors": entries, "metadata": rest}
    return json.dumps(blob, sort_keys=True, separators=(",", ":")).encode()


def craft(
    arrays=None,
    structure=None,
    *,
    entries=None,
    meta=None,
    crc=None,
    header_crc=True,
    header_text=None,
    data=None,
):
    """A checkpoint file's bytes. By default a valid version-2 file holding ``arrays`` (key ->
    array) and ``structure`` (the node list); each keyword replaces one part: ``entries`` the
    tensor entries, ``meta`` fields of the metadata (None deletes one), ``crc`` the crc32
    field's text, ``header_crc`` False keeps a stale header checksum, ``header_text`` the whole
    header, ``data`` the data section. The header checksum is recomputed unless told not to."""
    arrays = {"0": F32} if arrays is None else arrays
    if structure is None:
        structure = [{"t": "tensor", "k": "0", "rg": False, "param": False}]
    ents, blob, off = {}, b"", 0
    for k, a in arrays.items():
        code = {"float32": "F32", "int32": "I32", "float64": "F64", "bool": "BOOL"}[str(a.dtype)]
        ents[k] = {"dtype": code, "shape": list(a.shape), "data_offsets": [off, off + a.nbytes]}
        blob += a.tobytes()
        off += a.nbytes
    m = {
        "format": "chainrule",
        "format_version": "2",
        "structure": structure if isinstance(structure, str) else json.dumps(structure),
        "crc32": crc
        if crc is not None
        else json.dumps({k: zlib.crc32(a.tobytes()) for k, a in arrays.items()}),
    }
    stale = str(zlib.crc32(_canonical(ents, m)))
    if entries is not None:
        ents = entries
    for k, v in (meta or {}).items():
        if v is None:
            m.pop(k, None)
        else:
            m[k] = v
    if "header_crc32" not in (meta or {}):
        m["header_crc32"] = str(zlib.crc32(_canonical(ents, m))) if header_crc else stale
    text = header_text if header_text is not None else json.dumps({"__metadata__": m, **ents})
    head = text.encode() if isinstance(text, str) else text
    head += b" " * (-len(head) % 8)
    return struct.pack("<Q", len(head)) + head + (blob if data is None else data)


def must_fail(data, match, cls=CheckpointError, tmp_path=None):
    """Loading ``data`` raises ``cls`` whose message matches; through a file object and a
    path, with and without mmap."""
    with pytest.raises(cls, match=match) as e:
        load(io.BytesIO(data))
    assert "cannot read" in str(e.value)
    if tmp_path is not None:
        p = tmp_path / "bad.st"
        p.write_bytes(data)
        for mm in (False, True):
            with pytest.raises(cls, match=match):
                load(p, mmap=mm, verify=True)


def test_craft_makes_valid_files(tmp_path):
    r = load(io.BytesIO(craft()))
    assert r.tolist() == [0.0, 1.0, 2.0, 3.0]


T0 = [{"t": "tensor", "k": "0", "rg": False, "param": False}]
ENTRY = {"dtype": "F32", "shape": [4], "data_offsets": [0, 16]}

HEADER_CASES = {
    # field values of the wrong type or out of range
    "offsets as strings": ({"0": {**ENTRY, "data_offsets": ["0", "16"]}}, "data_offsets"),
    "offsets null": ({"0": {**ENTRY, "data_offsets": None}}, "data_offsets"),
    "offsets floats": ({"0": {**ENTRY, "data_offsets": [0.0, 16.0]}}, "data_offsets"),
    "offsets bools": ({"0": {**ENTRY, "data_offsets": [False, True]}}, "data_offsets"),
    "offsets negative": ({"0": {**ENTRY, "data_offsets": [-16, 0]}}, "data_offsets"),
    "offsets reversed": ({"0": {**ENTRY, "data_offsets": [16, 0]}}, "data_offsets"),
    "offsets three": ({"0": {**ENTRY, "data_offsets": [0, 8, 16]}}, "data_offsets"),
    "offsets object": ({"0": {**ENTRY, "data_offsets": {"a": 1}}}, "data_offsets"),
    "offsets past the end": ({"0": {**ENTRY, "data_offsets": [16, 32]}}, "truncated"),
    "shape string": ({"0": {**ENTRY, "shape": "4"}}, "shape"),
    "shape negative": ({"0": {**ENTRY, "shape": [-4]}}, "shape"),
    "shape float": ({"0": {**ENTRY, "shape": [4.0]}}, "shape"),
    "shape null": ({"0": {**ENTRY, "shape": None}}, "shape"),
    "shape nested": ({"0": {**ENTRY, "shape": [[4]]}}, "shape"),
    "huge dims": ({"0": {**ENTRY, "shape": [2**62, 2**62, 2**40]}}, "needs .* bytes"),
    "huge dims zero": ({"0": {**ENTRY, "shape": [2**62, 0]}}, "needs 0 bytes"),
    "shape disagrees": ({"0": {**ENTRY, "shape": [3]}}, "inconsistent"),
    "dtype bogus": ({"0": {**ENTRY, "dtype": "F99"}}, 'dtype "F99"; expected one of F16'),
    "dtype null": ({"0": {**ENTRY, "dtype": None}}, "dtype null"),
    "dtype number": ({"0": {**ENTRY, "dtype": 5}}, "dtype 5"),
    "dtype list": ({"0": {**ENTRY, "dtype": ["F32"]}}, "dtype"),
    "dtype f4": ({"0": {**ENTRY, "dtype": "F4", "shape": [2]}}, "F4, which chainrule"),
    "entry a list": ({"0": [1, 2]}, "must be an object with 'dtype'"),
    "entry missing field": ({"0": {"dtype": "F32", "shape": [4]}}, "'data_offsets'"),
    # overlaps, gaps and trailing bytes
    "overlapping": (
        {"0": ENTRY, "1": {**ENTRY, "shape": [2], "data_offsets": [8, 16]}},
        "overlaps",
    ),
    "gap": ({"0": {**ENTRY, "shape": [2], "data_offsets": [8, 16]}}, "gap"),
    "trailing bytes": ({"0": {**ENTRY, "shape": [2], "data_offsets": [0, 8]}}, "after its last"),
}


@pytest.mark.parametrize("case", sorted(HEADER_CASES))
def test_malformed_tensor_entries(case, tmp_path):
    entries, match = HEADER_CASES[case]
    must_fail(craft(structure=T0, entries=entries), match, tmp_path=tmp_path)


META_CASES = {
    "checksum a list": ({"crc32": json.dumps([1, 2])}, "'crc32' metadata"),
    "checksum a string": ({"crc32": json.dumps({"0": "123"})}, "'crc32' metadata"),
    "checksum a list value": ({"crc32": json.dumps({"0": [123]})}, "'crc32' metadata"),
    "checksum negative": ({"crc32": json.dumps({"0": -1})}, "32-bit unsigned"),
    "checksum float": ({"crc32": json.dumps({"0": 1.5})}, "'crc32' metadata"),
    "checksum too big": ({"crc32": json.dumps({"0": 2**40})}, "32-bit unsigned"),
    "checksum not JSON": ({"crc32": "{"}, "'crc32' metadata"),
    "checksum missing": ({"crc32": None}, "'crc32' metadata is '\\(missing\\)'"),
    "checksum of no tensor": ({"crc32": "{}"}, "no checksum for \\['0'\\]"),
    "checksum duplicate key": ({"crc32": '{"0": 1, "0": 2}'}, "'crc32' metadata"),
    "header checksum missing": ({"header_crc32": None}, "'header_crc32'"),
    "header checksum not digits": ({"header_crc32": "0x12"}, "'header_crc32'"),
    "header checksum unicode digits": ({"header_crc32": "\u0663"}, "'header_crc32'"),
    "header checksum huge": ({"header_crc32": "9" * 5000}, "'header_crc32'"),
    "version unknown": ({"format_version": "99"}, "format_version is '99'"),
    "structure missing": ({"structure": None}, "'structure' metadata is missing"),
    "structure not JSON": ({"structure": "[{"}, "not valid JSON"),
    "structure huge int": ({"structure": "[" + "9" * 5000 + "]"}, "not valid JSON"),
    "structure depth bomb": ({"structure": "[" * 100_000 + "]" * 100_000}, "nested too deeply"),
}


@pytest.mark.parametrize("case", sorted(META_CASES))
def test_malformed_metadata(case, tmp_path):
    meta, match = META_CASES[case]
    must_fail(craft(meta=meta), match, tmp_path=tmp_path)


def _b64_pickle_of_persistent(pid):
    """A pickle (protocol 2) whose only content is the persistent id ``pid``."""
    import base64

    class _P(pickle.Pickler):
        def persistent_id(self, o):
            return pid if o == "tensor" else None

    buf = io.BytesIO()
    _P(buf, protocol=2).dump(["tensor"])
    return base64.b64encode(buf.getvalue()).decode()


def _node(k="0"):
    return {"t": "tensor", "k": k, "rg": False, "param": False}


STRUCTURE_CASES = {
    "empty": ([], "non-empty JSON list"),
    "not a list": ({"t": "tensor", "k": "0"}, "non-empty JSON list"),
    "forward reference": ([{"t": "list", "v": [1]}, _node()], "indices of earlier nodes"),
    "self reference": ([{"t": "list", "v": [0]}], "indices of earlier nodes"),
    "index bool": ([_node(), {"t": "list", "v": [True]}], "indices of earlier nodes"),
    "index string": ([_node(), {"t": "list", "v": ["0"]}], "indices of earlier nodes"),
    "index negative": ([_node(), {"t": "list", "v": [-1]}], "indices of earlier nodes"),
    "children null": ([{"t": "list", "v": None}], "'v': null"),
    "tensor key int": ([{"t": "tensor", "k": 0}], "key 0; expected a string"),
    "tensor key absent": ([_node("9")], "refers to tensor '9'"),
    "tensor flag string": ([{**_node(), "rg": "yes"}], "'rg'"),
    "unknown tag": ([{"t": "exec", "v": "os.system"}], 'unknown type "exec"'),
    "pickle without refs": ([{"t": "pickle", "v": "os.system"}], "'p': null"),
    "pickle not base64": ([{"t": "pickle", "v": "os.system!", "p": []}], "expected base64"),
    "pickle empty": ([{"t": "pickle", "v": "", "p": []}], "expected base64"),
    "pickle refers to a str": (["s", {"t": "pickle", "v": "gAJdcQAu", "p": [0]}], "not a tensor"),
    "pickle of an unlisted tensor": (
        [_node(), {"t": "pickle", "v": _b64_pickle_of_persistent(0), "p": []}],
        "refers to 0, which is not one of the tensors it lists",
    ),
    "tag not a string": ([{"t": 5}], "object with a string 't'"),
    "node a list": ([[1, 2]], "expected a JSON scalar"),
    "dict unequal": ([1, {"t": "dict", "k": [0, 0], "v": [0]}], "2 keys but 1 values"),
    "unhashable key": ([1, {"t": "list", "v": [0]}, {"t": "dict", "k": [1], "v": [0]}], "list"),
    "duplicate dict key": ([1, "a", {"t": "dict", "k": [0, 0], "v": [1, 1]}], "duplicate key"),
    "dtype bogus": ([{"t": "dtype", "v": "complex512"}], "expected one of float16"),
    "dtype not a string": ([{"t": "dtype", "v": None}], "names null"),
    "size negative": ([{"t": "size", "v": [-1]}], "non-negative integers"),
    "size string": ([{"t": "size", "v": "3"}], "non-negative integers"),
}


@pytest.mark.parametrize("case", sorted(STRUCTURE_CASES))
def test_malformed_structure(case):
    structure, match = STRUCTURE_CASES[case]
    must_fail(craft(structure=structure), match)


def test_structure_depth_bomb_of_valid_nodes_loads_without_recursion():
    nodes = [_node()] + [{"t": "list", "v": [i]} for i in range(50_000)]
    r = load(io.BytesIO(craft(structure=nodes)))
    for _ in range(50_000):
        r = r[0]
    assert r.tolist() == [0.0, 1.0, 2.0, 3.0]


FILE_CASES = {
    "empty": (b"", "truncated or empty"),
    "seven bytes": (b"\x10\0\0\0\0\0\0", "truncated or empty"),
    "length past the end": (struct.pack("<Q", 1000) + b"{}", "header claims 1000"),
    "huge length": (struct.pack("<Q", 2**63) + b"{}", "header claims"),
    "header not JSON": (struct.pack("<Q", 8) + b"{nope!!}", "not valid JSON"),
    "header not UTF-8": (struct.pack("<Q", 8) + b"{\xff\xfe    }", "not valid JSON"),
    "header an array": (struct.pack("<Q", 8) + b"[1,2]   ", "not a JSON object"),
    "header depth bomb": (struct.pack("<Q", 200_000) + b"[" * 200_000, "nested too deeply"),
    "header duplicate tensor": (
        craft(header_text='{"0": %s, "0": %s}' % (json.dumps(ENTRY), json.dumps(ENTRY))),
        "key '0' twice",
    ),
    "metadata duplicate field": (
        craft(header_text='{"__metadata__": {"format": "a", "format": "b"}}', data=b""),
        "key 'format' twice",
    ),
    "metadata not strings": (
        craft(header_text='{"__metadata__": {"format": 1}}', data=b""),
        "'__metadata__' must be a JSON object of strings",
    ),
    "zip": (b"PK\x03\x04" + b"\0" * 100, "PyTorch"),
    "pickle": (b"\x80\x04\x95" + b"\0" * 100, "PyTorch"),
}


@pytest.mark.parametrize("case", sorted(FILE_CASES))
def test_hostile_files(case, tmp_path):
    data, match = FILE_CASES[case]
    must_fail(data, match, tmp_path=tmp_path)


class _Boom:
    def __reduce__(self):
        import os

        return (os.system, ("echo pwned > " + _Boom.target,))


def test_pickle_payload_is_refused_and_never_run(tmp_path):
    target = tmp_path / "pwned"
    _Boom.target = str(target)
    for proto in (2, 4, 5):
        data = pickle.dumps({"w": _Boom()}, protocol=proto)
        must_fail(data, "PyTorch", tmp_path=tmp_path)
    import torch

    # The same payload in a PyTorch zip checkpoint and in a chainrule one (pickled part):
    # refused by the weights_only allow-list before anything is imported or called.
    path = tmp_path / "torch.pt"
    torch.save({"w": torch.ones(2), "boom": _Boom()}, path)
    buf = io.BytesIO()
    save({"w": chainrule.ones(2), "boom": _Boom()}, buf)
    for src in (path, io.BytesIO(path.read_bytes()), io.BytesIO(buf.getvalue())):
        with pytest.raises(pickle.UnpicklingError, match=r"global: GLOBAL posix\.system was"):
            load(src)
    assert not target.exists()


# Integrity (issue 12, defect 8) --------------------------------------------------------------
def _valid():
    buf = io.BytesIO()
    save({"w": chainrule.arange(8.0), "step": 3}, buf)
    return buf.getvalue()


def _edit_header(data, edit):
    """Rewrite the header through ``edit(header_dict)``, keeping all other bytes."""
    n = struct.unpack("<Q", data[:8])[0]
    h = json.loads(data[8 : 8 + n])
    edit(h)
    text = json.dumps(h).encode()
    text += b" " * (-len(text) % 8)
    return struct.pack("<Q", len(text)) + text + data[8 + n :]


def test_int32_header_over_float32_bytes_is_refused(tmp_path):
    from safetensors.numpy import load as st_load

    def retype(h):
        for k, v in h.items():
            if k != "__metadata__":
                v["dtype"] = "I32"

    bad = _edit_header(_valid(), retype)
    assert st_load(bad)["0"].dtype == np.int32  # safetensors alone would read it
    must_fail(bad, "header fails its checksum", CheckpointIntegrityError, tmp_path=tmp_path)


def test_reshaped_or_restructured_header_is_refused():
    def reshape(h):
        h["0"]["shape"] = [2, 4]

    must_fail(_edit_header(_valid(), reshape), "header fails", CheckpointIntegrityError)

    def restructure(h):
        h["__metadata__"]["structure"] = h["__metadata__"]["structure"].replace("3", "4")

    must_fail(_edit_header(_valid(), restructure), "header fails", CheckpointIntegrityError)


def test_list_checksum_is_refused_not_skipped():
    def listify(h):
        crc = json.loads(h["__metadata__"]["crc32"])
        h["__metadata__"]["crc32"] = json.dumps({k: [v] for k, v in crc.items()})

    must_fail(_edit_header(_valid(), listify), "'crc32' metadata")
    # Even with the header checksum recomputed to match, a list checksum is refused.
    must_fail(craft(crc=json.dumps({"0": [zlib.crc32(F32.tobytes())]})), "'crc32' metadata")


def test_flipped_data_byte_names_the_tensor(tmp_path):
    data = bytearray(_valid())
    data[-3] ^= 0x40
    must_fail(bytes(data), "tensor '0' .* fails its checksum", CheckpointIntegrityError, tmp_path)
    p = tmp_path / "f.st"
    p.write_bytes(bytes(data))
    assert load(p, mmap=True)["step"] == 3  # mmap=True does not read the data by default
    with pytest.raises(CheckpointIntegrityError):
        load(p, mmap=True, verify=True)


# Random damage -------------------------------------------------------------------------------
def _equal_or_refused(data, good):
    """Loading damaged bytes either refuses with CheckpointError or gives the original."""
    try:
        r = load(io.BytesIO(data))
    except CheckpointError:
        return 0
    assert r["step"] == good["step"]
    assert r["w"].numpy().tobytes() == good["w"].numpy().tobytes()
    assert r["b"].numpy().tobytes() == good["b"].numpy().tobytes()
    return 1


def test_every_truncation_and_many_byte_flips_are_refused():
    good = {"w": chainrule.arange(6.0), "b": chainrule.tensor([True, False]), "step": 7}
    buf = io.BytesIO()
    save(good, buf)
    data = buf.getvalue()
    for cut in range(len(data)):
        with pytest.raises(CheckpointError):
            load(io.BytesIO(data[:cut]))
    with pytest.raises(CheckpointError, match="after its last tensor"):
        load(io.BytesIO(data + b"\0"))
    rng = np.random.default_rng(0)
    loaded = 0
    for _ in range(3000):
        bad = bytearray(data)
        for i in rng.integers(0, len(data), size=rng.integers(1, 4)):
            bad[i] ^= int(rng.integers(1, 256))
        loaded += _equal_or_refused(bytes(bad), good)
    assert loaded < 100  # only flips inside the header's padding (spaces to tabs) load


JUNK = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(-(2**65), 2**65),
    st.floats(),
    st.text(max_size=5),
    st.lists(st.integers(-3, 20), max_size=4),
    st.dictionaries(st.text(max_size=3), st.integers(), max_size=2),
)


@settings(max_examples=300)
@given(
    dtype=st.sampled_from(["F32", "I32", "F64", "BOOL", "U8"]) | JUNK,
    shape=st.lists(st.integers(0, 5), max_size=3) | JUNK,
    offsets=st.tuples(st.integers(-2, 40), st.integers(-2, 40)).map(list) | JUNK,
    structure=st.sampled_from([T0, [1, {"t": "list", "v": [0]}]])
    | st.lists(JUNK | st.fixed_dictionaries({"t": JUNK, "k": JUNK, "v": JUNK}), max_size=3),
    crc=st.sampled_from([None, "{}", '{"0": 0}', "[]"]),
    data_len=st.integers(0, 40),
)
def test_random_headers_are_refused_cleanly(dtype, shape, offsets, structure, crc, data_len):
    entries = {"0": {"dtype": dtype, "shape": shape, "data_offsets": offsets}}
    data = craft(structure=structure, entries=entries, crc=crc, data=bytes(range(data_len)))
    try:
        load(io.BytesIO(data))
    except CheckpointError as e:
        assert str(e).startswith("chainrule.load: cannot read")
