// The declaration in include/libfuzzer.h is all this target provides: LLVMFuzzerRunDriver itself is
// in compiler-rt's libFuzzer (libclang_rt.fuzzer_no_main), which Scripts/fuzz.sh links in. (SwiftPM
// needs a source file per C target.)
