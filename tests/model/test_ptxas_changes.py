"""What ptxas changed, in words and numbers: the PTX widths a SASS width is compared with."""

from sectorviz.model.ptxas_changes import ptx_width


def test_the_bytes_per_lane_of_a_ptx_operation():
    assert ptx_width("ld.shared.f32") == 4
    assert ptx_width("ld.global.nc.v2.f32") == 8  # 2 x 32 bits
    assert ptx_width("st.shared.v4.b32") == 16
    assert ptx_width("ld.local.u8") == 1
    assert ptx_width("ld.shared.f64") == 8  # 64-bit in the PTX too: never "merged"
    assert ptx_width(None) == 0
    # an ldmatrix lane gives a 16-byte row (eight b16), as its LDSM reads: never "merged"
    assert ptx_width("ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16") == 16
    assert ptx_width("cp.async.cg.shared.global") == 0  # its size is an operand
