# Benchmarks (see Benchmarks/bench.py). `make bench SIZE=1GB` writes BENCHMARKS.md;
# `make bench-tiny` is the quick CI check: it fails only if a command fails or outputs differ.
SIZE ?= 1GB
RUNS ?= 3
OUT ?= BENCHMARKS.md
PYTHON ?= python3
DUMPKIT ?=

.PHONY: demo test format bench bench-deps bench-tiny

# The README's two set-up commands, as make targets.
demo:
	Scripts/demo.sh

test:
	Scripts/test.sh

format:
	Scripts/format.sh

# The Python peers' modules (jsonschema for validate, crc32c for blob extraction).
bench-deps:
	$(PYTHON) -c 'import jsonschema, crc32c' 2>/dev/null || $(PYTHON) -m pip install --quiet jsonschema crc32c

bench: bench-deps
	$(PYTHON) Benchmarks/bench.py --size $(SIZE) --runs $(RUNS) --out $(OUT) $(if $(DUMPKIT),--dumpkit $(DUMPKIT))

bench-tiny:
	$(PYTHON) Benchmarks/bench.py --size 5MB --runs 1 $(if $(DUMPKIT),--dumpkit $(DUMPKIT))
