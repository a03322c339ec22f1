#![no_main]
//! Fuzz the `txt` converter.

mod common;

libfuzzer_sys::fuzz_target!(|data: &[u8]| common::check(trace::convert::Format::Txt, data));
