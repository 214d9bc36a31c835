"""``ptx-verify kernel``: a compiled kernel's PTX executed exactly on the CPU, every thread of every CTA of a launch,
with the catalog's layouts as the tensor-core instructions' meaning, decided by two engines (docs/kernels.md;
``frontdoor.verify`` is the entry of the API and the command line)."""
