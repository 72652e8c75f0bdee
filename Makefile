# Benchmarks (see Benchmarks/bench.py). `make bench SIZE=1GB` writes BENCHMARKS.md;
# `make bench-tiny` is the quick CI check: it fails only if a command fails or outputs differ.
SIZE ?= 1GB
RUNS ?= 3
OUT ?= BENCHMARKS.md
PYTHON ?= python3
DUMPKIT ?=

.PHONY: bench bench-tiny

bench:
	$(PYTHON) Benchmarks/bench.py --size $(SIZE) --runs $(RUNS) --out $(OUT) $(if $(DUMPKIT),--dumpkit $(DUMPKIT))

bench-tiny:
	$(PYTHON) Benchmarks/bench.py --size 5MB --runs 1 $(if $(DUMPKIT),--dumpkit $(DUMPKIT))
