"""Nsight Compute metric names that measure the boundaries the model predicts (sectors,
requests, bytes), printed beside each boundary and read back from measured CSVs."""

LOAD_SECTORS = "l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum"
STORE_SECTORS = "l1tex__t_sectors_pipe_lsu_mem_global_op_st.sum"
LOAD_REQUESTS = "l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum"
STORE_REQUESTS = "l1tex__t_requests_pipe_lsu_mem_global_op_st.sum"
ATOM_SECTORS = "l1tex__t_sectors_pipe_lsu_mem_global_op_atom.sum"
RED_SECTORS = "l1tex__t_sectors_pipe_lsu_mem_global_op_red.sum"
ATOM_REQUESTS = "l1tex__t_requests_pipe_lsu_mem_global_op_atom.sum"
RED_REQUESTS = "l1tex__t_requests_pipe_lsu_mem_global_op_red.sum"
L2_SECTORS = "lts__t_sectors_srcunit_tex_op_read.sum + lts__t_sectors_srcunit_tex_op_write.sum"
DRAM_BYTES = "dram__bytes_read.sum + dram__bytes_write.sum"
