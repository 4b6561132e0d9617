"""A backend written from plugins/README.md alone, for a chip nobody has: "ToyChip", whose
torch build would be an extension module ``torch_toy`` adding ``torch.toy``. The suite loads
it (KGB_EXTRA_PLUGINS) to show the README's path: listed by ``kgb backends``, probed step by
step by ``kgb doctor``, and passing the conformance checks (tests/test_readme_backend.py).

Facts (made up for the fixture): ToyChip's documentation, "ToyChip Triton notes", section 2.
"""

from __future__ import annotations

from kgb_core import hookimpl
from kgb_core.api import (LARGE, SMALL, Availability, ChipProfile, Quirks, TimingSettings,
                          TorchDeviceBackend)

_NOTES = "ToyChip Triton notes, section 2"


class ToyChipBackend(TorchDeviceBackend):
    profile = ChipProfile(
        name="toychip",
        description="ToyChip accelerators through torch_toy (toy events, 64 MB flush)",
        quirks=Quirks(
            device_type="toy",
            skipped_dtypes={"float64": f"no float64 units ({_NOTES})"},
            max_num_warps=8,
            prompt_hints=("This is a ToyChip: tensors live on device 'toy' (import torch_toy).",),
            case_tiers=(SMALL, LARGE),
            timed_tiers=(LARGE,),
            denied_operators={"aten.sort": f"no sort in ToyChip's Triton ({_NOTES})"},
        ),
        default_timing=TimingSettings(warmup_ms=25.0, rep_ms=100.0, min_repetitions=10),
    )
    device_module_name = "toy"
    runtime_modules = ("torch_toy",)
    flush_bytes = 64 * 1024 * 1024
    visible_devices_variable = "TOY_VISIBLE_DEVICES"
    device_files = ("/dev/toy[0-9]*",)

    def probe(self) -> Availability:
        return self.probe_extension(runtime="torch_toy", needs="a ToyChip device",
                                    chip="ToyChip accelerator", tool="toy-smi")


@hookimpl
def kgb_register_backends(register):
    register(ToyChipBackend())
