"""What the engine refuses or skips: the instruction families it does not run (each named
in the one-line error), the no-ops (fences, prefetches: they order or hint, and move no data
that the counts see) and the calls it runs as no-ops."""

from __future__ import annotations

NO_OPS = ("membar", "fence", "nanosleep", "prefetch", "prefetchu", "griddepcontrol",
          "pmevent", "discard", "applypriority", "createpolicy")
REFUSED = {"tex": "textures", "tld4": "textures", "txq": "textures", "suld": "surfaces",
           "sust": "surfaces", "sured": "surfaces", "suq": "surfaces", "wgmma": "wgmma",
           "brx": "indirect branches",
           "tcgen05": "tensor memory"}
BULK = "bulk copies (TMA)"  # all but a lane's 16 bytes from global to shared (sites.bulk_copy)
SILENT_CALLS = ("vprintf", "__assertfail")  # run as no-ops: their memory use is in the PTX


class Unrunnable(Exception):
    """An instruction the engine does not run; the message says what it is (the machine
    adds the source line and the PTX text)."""
