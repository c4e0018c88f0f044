"""Structs and classes in CUDA kernels: C layout, member accesses, whole-struct copies,
member functions, operators, constructors, static members; counted against a brute-force
reference (per-lane byte addresses -> distinct 32-byte sectors per warp)."""

from __future__ import annotations

import numpy as np
import pytest
from cuda_helpers import elements, kernel_pattern, run
from hypothesis import given, settings
from hypothesis import strategies as st

from sectorviz.model import analyze
from sectorviz.model.errors import PatternError
from sectorviz.model.frontend import kernel_for

SIZES = {"char": (1, 1), "short": (2, 2), "int": (4, 4), "float": (4, 4), "double": (8, 8),
         "float3": (12, 4), "float4": (16, 16), "double2": (16, 16), "char4": (4, 4)}


def c_layout(members: list[tuple[str, int, int]], struct_align: int = 1):
    """Reference C layout: (type, count, alignas) members -> (offsets, size, alignment)."""
    offset, align, offsets = 0, struct_align, []
    for ctype, count, alignas in members:
        size, a = SIZES[ctype]
        a = max(a, alignas)
        offset = -(-offset // a) * a
        offsets.append(offset)
        offset += size * count
        align = max(align, a)
    return offsets, max(1, -(-offset // align) * align), align


def declare(members: list[tuple[str, int, int]], struct_align: int = 1) -> str:
    fields = " ".join(f"{'alignas(%d) ' % al if al > 1 else ''}{t} m{k}"
                      f"{'[%d]' % n if n > 1 else ''};" for k, (t, n, al) in enumerate(members))
    head = f"alignas({struct_align}) " if struct_align > 1 else ""
    return f"struct {head}S {{ {fields} }};"


def warp_sectors(addresses: np.ndarray, width: int, active: np.ndarray) -> int:
    """Brute force: distinct 32-byte sectors touched by the active lanes of each warp."""
    total = 0
    for warp in range(0, len(addresses), 32):
        seen = set()
        for a, on in zip(addresses[warp:warp + 32], active[warp:warp + 32]):
            if on:
                seen.update(range(int(a) // 32, (int(a) + width - 1) // 32 + 1))
        total += len(seen)
    return total


member_lists = st.lists(st.tuples(st.sampled_from(sorted(SIZES)), st.integers(1, 3),
                                  st.sampled_from([1, 1, 2, 8, 16])), min_size=1, max_size=5)


@settings(max_examples=40, deadline=None)
@given(members=member_lists, struct_align=st.sampled_from([1, 1, 4, 16, 32]))
def test_layout_follows_c_rules(members, struct_align):
    offsets, size, align = c_layout(members, struct_align)
    code = declare(members, struct_align) + """
    __global__ void k(float* a, S* s) {
        a[sizeof(S)] = 0; a[alignof(S)] = 0; a[sizeof(s[0])] = 0;
        """ + " ".join(f"a[(int)((char*)&s[0].m{k} - (char*)s)] = 0;"
                       for k in range(len(members))) + "}"
    got = elements(code, arrays={"a": {"dtype": "float32", "length": 4096},
                                 "s": {"length": 4}}, block=(1,))
    assert [e[0] for _, e in got] == [size, align, size, *offsets]


PARTICLE = "struct Particle { float x, y, z; int id; };\n"
PACKED3 = "struct P3 { float x, y, z; };\n"


@pytest.mark.parametrize("block, n", [(32, 64), (96, 200), (48, 50)])
def test_member_access_is_one_access_of_the_member_at_its_offset(block, n):
    code = PARTICLE + """__global__ void k(Particle* p, int n) {
        int i = blockIdx.x * blockDim.x + threadIdx.x;
        if (i < n) p[i].y = p[i].z + 1;
    }"""
    grid = -(-n // block)
    analysis, kernel = run(code, arrays={"p": {"length": n}}, params={"n": n},
                           grid=(grid,), block=(block,))
    assert kernel.arrays["p"].spec.elem_bytes == 16 and kernel.arrays["p"].spec.dtype == \
        "Particle"
    warps = -(-block // 32) * grid
    t = np.concatenate([np.arange(b * block, b * block + -(-block // 32) * 32)
                        for b in range(grid)])
    lane_in_block = np.concatenate([np.arange(-(-block // 32) * 32)] * grid)
    active = (t < n) & (lane_in_block < block)
    base = kernel.arrays["p"].address0
    z, y = analysis.instructions
    assert (z.name, z.op, z.width) == ("line 4: p[i].z", "load", 4)
    assert (y.name, y.op, y.width) == ("line 4: p[i].y", "store", 4)
    assert z.sectors == warp_sectors(base + 16 * t + 8, 4, active)
    assert y.sectors == warp_sectors(base + 16 * t + 4, 4, active)
    assert z.requests == sum(active[w:w + 32].any() for w in range(0, 32 * warps, 32))


def test_whole_struct_copy_is_one_access_per_alignment_chunk():
    code = PACKED3 + """
    struct alignas(16) Q { float x, y, z, w; };
    struct D { double d; int i; };
    __global__ void k(P3* p, Q* q, D* d, P3* p2, Q* q2) {
        int i = threadIdx.x;
        P3 a = p[i];
        Q b = q[i];
        D c = d[i];
        p2[i] = a; q2[i] = b;
    }"""
    analysis, kernel = run(code, arrays={n: {"length": 32} for n in ("p", "q", "d", "p2",
                                                                      "q2")})
    got = [(s.name, s.op, s.width, s.sectors) for s in analysis.instructions]
    assert got == [
        ("line 7: p[i].x", "load", 4, warp_sectors(np.arange(32) * 12, 4, np.ones(32))),
        ("line 7: p[i].y", "load", 4, warp_sectors(np.arange(32) * 12 + 4, 4, np.ones(32))),
        ("line 7: p[i].z", "load", 4, warp_sectors(np.arange(32) * 12 + 8, 4, np.ones(32))),
        ("line 8: q[i]", "load", 16, 16),
        ("line 9: d[i].d", "load", 8, 16),
        ("line 9: d[i] (bytes 8-15)", "load", 8, 16),
        ("line 10: p2[i].x", "store", 4, 12), ("line 10: p2[i].y", "store", 4, 12),
        ("line 10: p2[i].z", "store", 4, 12), ("line 10: q2[i]", "store", 16, 16),
    ]


def test_three_component_vectors_are_copied_per_component():
    """float3 is aligned to 4 bytes: nvcc copies it as three 4-byte accesses."""
    code = """__global__ void k(float3* a, float3* c) {
        int i = threadIdx.x;
        float3 v = a[i];
        c[i] = v;
    }"""
    analysis, _ = run(code, arrays={n: {"length": 64} for n in "ac"})
    t, on = np.arange(32), np.ones(32, dtype=bool)
    got = [(s.name, s.width, s.sectors) for s in analysis.instructions]
    assert got == [(f"line {line}: {a}[i].{f}", 4, warp_sectors(12 * t + 4 * k, 4, on))
                   for line, a in ((3, "a"), (4, "c")) for k, f in enumerate("xyz")]


def test_nested_members_and_arrow():
    code = """
    struct In { short s; double v[3]; };
    struct Out { char c; In in; float f; };
    __global__ void k(Out* o) {
        int i = threadIdx.x;
        o[i].in.v[2] = 0;
        (o + i)->in.s = 1;
        Out* q = o + i;
        q->f = q->in.v[1];
    }"""
    # In: s at 0, v at 8, size 32, align 8; Out: c 0, in 8, f 40, size 48
    analysis, kernel = run(code, arrays={"o": {"length": 32}})
    assert kernel.arrays["o"].spec.elem_bytes == 48
    t = np.arange(32)
    want = [("line 6: o[i].in.v[2]", 8, 48 * t + 8 + 8 + 16),
            ("line 7: (o + i)->in.s", 2, 48 * t + 8),
            ("line 9: q->in.v[1]", 8, 48 * t + 8 + 8 + 8),
            ("line 9: q->f", 4, 48 * t + 40)]
    assert [(s.name, s.width, s.sectors) for s in analysis.instructions] == [
        (name, w, warp_sectors(a, w, np.ones(32))) for name, w, a in want]


def test_local_structs_member_functions_operators_and_constructors():
    code = """
    struct alignas(16) V4 {
        int v[4];
        static constexpr int size = 16 / sizeof(int);
        __device__ V4() : v{0, 0, 0, 0} {}
        __device__ V4(int a, int b) { v[0] = a; v[1] = b; v[2] = a + b; v[3] = a - b; }
        __device__ int& operator[](int k) { return v[k]; }
        __device__ V4 operator+(const V4& o) const {
            V4 r;
            for (int k = 0; k < size; k++) r.v[k] = v[k] + o.v[k];
            return r;
        }
        __device__ V4& operator+=(int d) { for (int k = 0; k < size; k++) v[k] += d; return *this; }
        __device__ int sum() const { return v[0] + v[1] + this->v[2] + v[3]; }
        static __device__ V4 make(int t) { return V4(t, 1); }
    };
    __global__ void k(float* a) {
        int t = threadIdx.x;
        V4 p = V4::make(t);
        V4 q(2, t);
        V4 r = p + q;
        r += 1;
        r[t % V4::size] = 7;
        a[r.sum()] = 0;
        V4 z;
        a[500 + z.sum() + z[3]] = 0;
    }"""
    got = elements(code)

    def ref(t):
        r = [t + 2, 1 + t, (t + 1) + (2 + t), (t - 1) + (2 - t)]
        r = [x + 1 for x in r]
        r[t % 4] = 7
        return sum(r)
    assert got == [("line 24: a[r.sum()]", [ref(t) for t in range(32)]),
                   ("line 26: a[500 + z.sum() + z[3]]", [500] * 32)]


def test_packed_vector_type_loads_through_int4():
    code = """
    struct alignas(16) Packed {
        float v[4];
        __device__ float& operator[](int i) { return v[i]; }
        static __device__ Packed load(const float* p) {
            return *reinterpret_cast<const Packed*>(p);
        }
        __device__ void store(float* p) { *reinterpret_cast<int4*>(p) = bits(); }
        __device__ int4 bits() { return make_int4(v[0], v[1], v[2], v[3]); }
    };
    __global__ void k(const float* in, float* out) {
        int i = (blockIdx.x * blockDim.x + threadIdx.x) * 4;
        Packed x = Packed::load(in + i);
        for (int k = 0; k < 4; k++) x[k] = x[k] * 2;
        x.store(out + i);
    }"""
    arrays = {"in": {"dtype": "float32", "length": 1024}, "out": {"dtype": "float32",
                                                                  "length": 1024}}
    analysis, _ = run(code, arrays=arrays, grid=(4,), block=(64,))
    got = [(s.name, s.width, s.requests, s.sectors) for s in analysis.instructions]
    assert got == [("line 6: *reinterpret_cast<const Packed*>(p)", 16, 8, 8 * 16),
                   ("line 8: *reinterpret_cast<int4*>(p)", 16, 8, 8 * 16)]


def test_vector_load_through_reinterpret_cast_reads_given_values():
    code = """__global__ void k(float* a, const int* idx) {
        int4 q = reinterpret_cast<const int4*>(idx)[threadIdx.x];
        a[q.y + q.w] = 0;
    }"""
    got = elements(code, arrays={"a": {"dtype": "float32", "length": 1024},
                                 "idx": {"dtype": "int32", "length": 128,
                                         "values": {"kind": "expr", "expr": "i * 3"}}})
    assert got[1] == ("line 3: a[q.y + q.w]",
                      [3 * (4 * t + 1) + 3 * (4 * t + 3) for t in range(32)])


def test_struct_member_read_from_an_array_with_values():
    code = """struct Pair { int a, b; };
    __global__ void k(float* out, const int* idx) {
        const Pair* p = reinterpret_cast<const Pair*>(idx);
        Pair q = p[threadIdx.x];
        out[q.b] = 0;
    }"""
    got = elements(code, arrays={"out": {"dtype": "float32", "length": 1024},
                                 "idx": {"dtype": "int32", "length": 64,
                                         "values": {"kind": "expr", "expr": "64 - i"}}})
    assert got[-1] == ("line 5: out[q.b]", [64 - (2 * t + 1) for t in range(32)])


def test_local_member_array_index_is_checked():
    code = """struct V { int v[4]; };
    __global__ void k(float* a) {
        V x = {1, 2, 3, 4};
        a[x.v[threadIdx.x]] = 0;
    }"""
    with pytest.raises(PatternError, match=r"line 4, column 11: index 4 of 'x.v\[threadIdx.x\]' "
                                           r"outside \[0, 4\) at warp 0 lane 4"):
        run(code)


@pytest.mark.parametrize("code, message", [
    ("struct S { int a : 3; }; __global__ void k(S* s) { s[0].a = 1; }", "bit fields"),
    ("struct B { int a; }; struct S : B { int c; }; __global__ void k(S* s) { s[0].c = 1; }",
     "base classes of 'S' are outside the subset"),
    ("struct S { int val; }; __global__ void k(S* s) { s[0].vals = 1; }",
     "field 'vals' of S is outside the subset (did you mean 'val'?)"),
    ("struct S { int a; }; __global__ void k(S* s) { S t = s[0] + s[1]; }",
     "'+' of S needs an 'operator+' member function"),
    ("struct alignas(3) S { int a; }; __global__ void k(S* s) { s[0].a = 1; }",
     "alignas(3): an alignment is a power of two"),
])
def test_struct_errors_name_the_line(code, message):
    with pytest.raises(PatternError, match="line 1, column") as info:
        analyze(kernel_pattern(code, arrays={"s": {"length": 4}}))
    assert message in str(info.value)


def test_dtype_of_a_struct_array_must_match_its_size():
    code = PARTICLE + "__global__ void k(Particle* p) { p[threadIdx.x].x = 0; }"
    with pytest.raises(PatternError, match="points to Particle \\(16 bytes\\)"):
        kernel_for(kernel_pattern(code, arrays={"p": {"dtype": {"bytes": 12}, "length": 32}}))


def test_aos_against_soa_examples():
    """aos-cuda / soa-cuda: each access's sectors per warp from the Particle layout (24 bytes,
    members 4 bytes apart), every warp alike."""
    from sectorviz.model import load_pattern
    from sectorviz.paths import examples_dir

    aos = analyze(load_pattern(examples_dir() / "aos-cuda.sectorviz.json"))
    soa = analyze(load_pattern(examples_dir() / "soa-cuda.sectorviz.json"))
    lanes, on = np.arange(32), np.ones(32, dtype=bool)
    fields = ["x", "vx", "x", "y", "vy", "y", "z", "vz", "z"]
    offsets = {name: 4 * k for k, name in enumerate(["x", "y", "z", "vx", "vy", "vz"])}
    assert [s.source for s in aos.instructions] == [f"p[i].{f}" for f in fields]
    assert [s.source for s in soa.instructions] == [f"{f}[i]" for f in fields]
    assert aos.warps == soa.warps == 32768
    for s, f in zip(aos.instructions, fields):
        assert s.sectors == aos.warps * warp_sectors(24 * lanes + offsets[f], 4, on)
    for s in soa.instructions:
        assert s.sectors == soa.warps * warp_sectors(4 * lanes, 4, on)
    assert aos.totals.sectors // aos.warps == 216 and soa.totals.sectors // soa.warps == 36
    assert aos.totals.useful_bytes == soa.totals.useful_bytes == soa.totals.sectors * 32


PACKED_FLOATS = r"""
struct alignas(16) f128 {
    f128() = default;
    __device__ explicit f128(int4 bits) {
        static_assert(sizeof(bits) == sizeof(payload), "size");
        memcpy(&payload, &bits, sizeof(bits));
    }
    __device__ float& operator[](int index) { return payload[index]; }
    __device__ const float& operator[](int index) const { return payload[index]; }
    __device__ int4 get_bits() const {
        int4 bits;
        memcpy(&bits, &payload, sizeof(bits));
        return bits;
    }
    static constexpr const size_t size = sizeof(int4) / sizeof(float);
    float payload[size];
};
__device__ f128 load128(const float* p) { return f128{*reinterpret_cast<const int4*>(p)}; }
__device__ void store128(float* p, f128 v) { *reinterpret_cast<int4*>(p) = v.get_bits(); }
__global__ void scale(float* out, const float* inp, const int* idx, int n) {
    int i = (blockIdx.x * blockDim.x + threadIdx.x) * f128::size;
    if (i >= n) return;
    f128 packed_out;
    f128 packed_inp = load128(inp + i);
    for (int k = 0; k < packed_inp.size; ++k) packed_out[k] = packed_inp[k] * 2.0f;
    store128(out + i, packed_out);
    int4 b = f128(*reinterpret_cast<const int4*>(idx + i)).get_bits();
    out[b.z] = 0;
}"""


@pytest.mark.parametrize("n", [4096, 1000])
def test_packed_vector_type_with_memcpy_bit_copies(n):
    """A 16-byte packed type built from int4 by memcpy: 16-byte accesses, 4 threads' worth of
    floats per lane; the int4's values survive the round trip through the float payload."""
    arrays = {"out": {"dtype": "float32", "length": 4096},
              "inp": {"dtype": "float32", "length": 4096},
              "idx": {"dtype": "int32", "length": 4096,
                      "values": {"kind": "expr", "expr": "4095 - i"}}}
    kw = dict(function="scale", arrays=arrays, params={"n": n}, grid=(4,), block=(256,))
    analysis, kernel = run(PACKED_FLOATS, **kw)
    t = np.arange(1024)
    active = 4 * t < n
    got = {s.source: (s.width, s.sectors) for s in analysis.instructions}
    base = {name: kernel.arrays[name].address0 for name in arrays}
    assert got == {
        "*reinterpret_cast<const int4*>(p)": (16, warp_sectors(base["inp"] + 16 * t, 16,
                                                               active)),
        "*reinterpret_cast<int4*>(p)": (16, warp_sectors(base["out"] + 16 * t, 16, active)),
        "*reinterpret_cast<const int4*>(idx + i)": (16, warp_sectors(base["idx"] + 16 * t, 16,
                                                                     active)),
        "out[b.z]": (4, warp_sectors(base["out"] + 4 * (4093 - 4 * t), 4, active)),
    }
    assert elements(PACKED_FLOATS, **kw)[-1] == ("line 28: out[b.z]",
                                                 [4093 - 4 * t for t in range(32)])


PACKED_TEMPLATE = r"""
template<class T>
struct alignas(16) Packed {
    Packed() = default;
    __device__ explicit Packed(int4 bits) { memcpy(&v, &bits, sizeof(bits)); }
    __device__ static Packed filled(T x) {
        Packed r;
        for (int k = 0; k < size; ++k) r.v[k] = x;
        return r;
    }
    __device__ static Packed ones() { return filled(1); }
    __device__ T& operator[](int i) { return v[i]; }
    __device__ const T& operator[](int i) const { return v[i]; }
    __device__ int4 bits() const { int4 b; memcpy(&b, &v, sizeof(b)); return b; }
    static constexpr const size_t size = sizeof(int4) / sizeof(T);
    T v[size];
};
template<class T>
__device__ Packed<T> load16(const T* p) { return Packed<T>{*reinterpret_cast<const int4*>(p)}; }
template<class T>
__device__ void store16(T* p, Packed<T> x) { *reinterpret_cast<int4*>(p) = x.bits(); }
using h16 = Packed<__nv_bfloat16>;
typedef Packed<float> f16;
__global__ void add(__nv_bfloat16* out, const __nv_bfloat16* a, float* c, int n) {
    int i = (blockIdx.x * blockDim.x + threadIdx.x) * h16::size;
    if (i >= n) return;
    h16 x = load16(a + i);
    h16 y;
    for (int k = 0; k < x.size; k++) y[k] = x[k];
    store16(out + i, y);
    f16 one = f16::ones();
    c[(int)one[3] + sizeof(Packed<double>) + f16::size + Packed<char>::size] = 0;
}"""


def test_class_templates_with_statics_constructors_and_operators():
    arrays = {"out": {"length": 8192}, "a": {"length": 8192}, "c": {"length": 64}}
    kw = dict(function="add", arrays=arrays, params={"n": 8000}, grid=(4,), block=(256,))
    analysis, kernel = run(PACKED_TEMPLATE, **kw)
    assert kernel.arrays["out"].spec.elem_bytes == 2
    t = np.arange(1024)
    active = 8 * t < 8000
    got = [(s.source, s.array, s.width, s.sectors) for s in analysis.instructions]
    assert got == [
        ("*reinterpret_cast<const int4*>(p)", "a", 16,
         warp_sectors(kernel.arrays["a"].address0 + 16 * t, 16, active)),
        ("*reinterpret_cast<int4*>(p)", "out", 16,
         warp_sectors(kernel.arrays["out"].address0 + 16 * t, 16, active)),
        ("c[(int)one[3] + sizeof(Packed<double>) + f16::size + Packed<char>::size]", "c", 4,
         warp_sectors(np.full(1024, 4 * (1 + 16 + 4 + 16)), 4, active)),
    ]


def test_a_class_template_needs_its_arguments():
    code = PACKED_TEMPLATE.replace("sizeof(Packed<double>)", "sizeof(Packed)")
    with pytest.raises(PatternError, match="the class template 'Packed' needs its arguments"):
        run(code, function="add", arrays={"out": {"length": 64}, "a": {"length": 64},
                                          "c": {"length": 64}}, params={"n": 64})


@settings(max_examples=30, deadline=None)
@given(members=member_lists, struct_align=st.sampled_from([1, 4, 16]),
       stride=st.integers(0, 5), offset=st.integers(0, 7), pick=st.integers(0, 4))
def test_member_and_whole_struct_accesses_match_a_per_lane_reference(
        members, struct_align, stride, offset, pick):
    offsets, size, align = c_layout(members, struct_align)
    k = pick % len(members)
    ctype, count, _ = members[k]
    member = f"m{k}" + ("[0]" if count > 1 else "")
    code = declare(members, struct_align) + f"""
    __global__ void k(S* s, S* d, int st, int o) {{
        int i = threadIdx.x * st + o;
        d[i] = s[i];
        s[i].{member} = d[i + 1].{member};
    }}"""
    n = 32 * 5 + 8 + 2
    analysis, kernel = run(code, arrays={"s": {"length": n}, "d": {"length": n}},
                           params={"st": stride, "o": offset})
    t = np.arange(32)
    on = np.ones(32, dtype=bool)
    base = {a: kernel.arrays[a].address0 for a in ("s", "d")}
    unit = min(align, 16)
    spans = [(o, SIZES[c][0] * m) for o, (c, m, _) in zip(offsets, members)]
    chunks = [c for c in range(0, size, unit) if any(o < c + unit and o + w > c
                                                    for o, w in spans)]
    width, part = SIZES[ctype]  # a member aligned below its size (float3): per component
    parts = range(0, width, part) if part < width else [0]
    width = min(width, part)
    want = sorted(
        [("load", unit, warp_sectors(base["s"] + size * (t * stride + offset) + c, unit, on))
         for c in chunks] +
        [("store", unit, warp_sectors(base["d"] + size * (t * stride + offset) + c, unit, on))
         for c in chunks] +
        [("load", width, warp_sectors(base["d"] + size * (t * stride + offset + 1)
                                      + offsets[k] + c, width, on)) for c in parts] +
        [("store", width, warp_sectors(base["s"] + size * (t * stride + offset)
                                       + offsets[k] + c, width, on)) for c in parts])
    got = sorted((s.op, s.width, s.sectors) for s in analysis.instructions)
    assert got == want
