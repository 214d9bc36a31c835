"""Confirmation on real hardware: probe kernels (``probes``), building and running them on a GPU
(``cuda``), relations reconstructed from raw registers (``observe``), and a SIMULATED numpy
device that exercises the pipeline without a GPU (``simdevice``, always labelled)."""
