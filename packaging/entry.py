"""The bundle's executable: the `sectorviz` console script (sectorviz.cli:main), or with
`--nvrtc-child` (sectorviz.engine.compiled.nvrtc.CHILD_ARG) one NVRTC compile in a process of its
own, as `python -I nvrtc_child.py` runs it outside the bundle, or with `--supervise ...`
(sectorviz.engine.compiled.bounded.SUPERVISE_ARG) the supervisor of one compiler run, as
`python -I -S supervise.py ...` runs it outside the bundle."""

import multiprocessing
import sys

if __name__ == "__main__":
    multiprocessing.freeze_support()  # a sweep's spawned workers start from this executable
    if sys.argv[1:2] == ["--supervise"]:
        from sectorviz.engine.compiled import supervise

        sys.exit(supervise.main(sys.argv[2:]))
    if sys.argv[1:] == ["--nvrtc-child"]:
        from sectorviz.engine.compiled import nvrtc_child

        nvrtc_child.main()
        sys.exit(0)
    from sectorviz.cli import main

    sys.exit(main())
