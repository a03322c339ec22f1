#![no_main]
//! Fuzz the `oracle_general` converter.

mod common;

libfuzzer_sys::fuzz_target!(|data: &[u8]| common::check(trace::convert::Format::OracleGeneral, data));
