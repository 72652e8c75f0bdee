#ifndef DUMPKIT_LIBFUZZER_H
#define DUMPKIT_LIBFUZZER_H

#include <stddef.h>
#include <stdint.h>

/// libFuzzer's entry for programs with a main of their own (compiler-rt, FuzzerInterface.h): parses
/// libFuzzer's flags from argc/argv and runs `callback` on every input.
int LLVMFuzzerRunDriver(int *argc, char ***argv, int (*callback)(const uint8_t *data, size_t size));

#endif
