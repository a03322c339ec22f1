#![no_main]
//! Fuzz the `addresses` converter.

mod common;

libfuzzer_sys::fuzz_target!(|data: &[u8]| common::check(trace::convert::Format::Addresses, data));
