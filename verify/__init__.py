"""ptx-layout-verify: formal verification of PTX warp-level matrix fragment layouts."""
__version__ = "0.1.0"
