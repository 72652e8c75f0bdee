# Benchmarks (see Benchmarks/bench.py). `make bench SIZE=1GB` writes BENCHMARKS.md;
# `make bench-tiny` is the quick CI check: it fails only if a command fails or outputs differ.
SIZE ?= 1GB
RUNS ?= 3
OUT ?= BENCHMARKS.md
PYTHON ?= python3
DUMPKIT ?=
# `make install`: where the binary, completions and man page go (DESTDIR is prefixed for packaging).
PREFIX ?= /usr/local
STATIC_BUILD ?= .build-static

.PHONY: demo test format bench bench-deps bench-tiny install fuzz

# The README's two set-up commands, as make targets.
demo:
	Scripts/demo.sh

test:
	Scripts/test.sh

format:
	Scripts/format.sh

# The libFuzzer harnesses (Fuzz/, docs/FUZZING.md), FUZZ_SECONDS each; fails on a crash, leak or timeout.
# `make fuzz FUZZ_SECONDS=600 FUZZ_TARGETS=fuzz-json` runs one.
FUZZ_SECONDS ?= 60
FUZZ_TARGETS ?=
fuzz:
	FUZZ_SECONDS=$(FUZZ_SECONDS) Scripts/fuzz.sh $(FUZZ_TARGETS)

# The Python peers' modules (jsonschema for validate, crc32c for blob extraction).
bench-deps:
	$(PYTHON) -c 'import jsonschema, crc32c' 2>/dev/null || $(PYTHON) -m pip install --quiet jsonschema crc32c

bench: bench-deps
	$(PYTHON) Benchmarks/bench.py --size $(SIZE) --runs $(RUNS) --out $(OUT) $(if $(DUMPKIT),--dumpkit $(DUMPKIT))

bench-tiny:
	$(PYTHON) Benchmarks/bench.py --size 5MB --runs 1 $(if $(DUMPKIT),--dumpkit $(DUMPKIT))

# A release binary with the Swift standard library and Foundation linked in (no Swift toolchain
# needed to run it; it still needs libarchive and libzstd), shell completions and a man page.
install:
	Scripts/setup.sh
	swift build -c release --product dumpkit --static-swift-stdlib --scratch-path $(STATIC_BUILD)
	install -d $(DESTDIR)$(PREFIX)/bin $(DESTDIR)$(PREFIX)/share/man/man1 \
		$(DESTDIR)$(PREFIX)/share/bash-completion/completions $(DESTDIR)$(PREFIX)/share/zsh/site-functions \
		$(DESTDIR)$(PREFIX)/share/fish/vendor_completions.d
	install -m 755 $(STATIC_BUILD)/release/dumpkit $(DESTDIR)$(PREFIX)/bin/dumpkit
	$(STATIC_BUILD)/release/dumpkit --generate-completion-script bash > $(DESTDIR)$(PREFIX)/share/bash-completion/completions/dumpkit
	$(STATIC_BUILD)/release/dumpkit --generate-completion-script zsh > $(DESTDIR)$(PREFIX)/share/zsh/site-functions/_dumpkit
	$(STATIC_BUILD)/release/dumpkit --generate-completion-script fish > $(DESTDIR)$(PREFIX)/share/fish/vendor_completions.d/dumpkit.fish
	mkdir -p $(STATIC_BUILD)/man
	swift run generate-manual $(STATIC_BUILD)/release/dumpkit --output-directory $(STATIC_BUILD)/man
	install -m 644 $(STATIC_BUILD)/man/dumpkit.1 $(DESTDIR)$(PREFIX)/share/man/man1/dumpkit.1
	@echo "installed $(DESTDIR)$(PREFIX)/bin/dumpkit, its completions (bash, zsh, fish) and man page"
