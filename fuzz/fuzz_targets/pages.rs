#![no_main]
//! Fuzz the `pages` converter.

mod common;

libfuzzer_sys::fuzz_target!(|data: &[u8]| common::check(trace::convert::Format::Pages, data));
