"""The PTX engine: nvcc's PTX parsed (parse), run SIMT-style over chunks of whole blocks
(execute, with the op modules), and the front-end kernel of a compiled pattern (kernel)."""
