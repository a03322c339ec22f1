#![no_main]
//! Fuzz the binary trace reader: any bytes give records or a located error, never a panic.

libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    let Ok(mut r) = trace::TraceReader::open(data, "fuzz") else { return };
    // Bounded: every record consumes at least 12 bytes of (decompressed) input,
    // and zstd output per input byte is bounded by the format.
    while let Ok(Some(_)) = r.next_record() {}
});
