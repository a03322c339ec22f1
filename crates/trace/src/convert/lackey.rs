//! valgrind lackey (`--tool=lackey --trace-mem=yes`) output.
//!
//! Lines: `I  ADDR,SIZE` (instruction fetch), ` L ADDR,SIZE` (load),
//! ` S ADDR,SIZE` (store), ` M ADDR,SIZE` (modify: load then store, one
//! reference that writes); ADDR in hex, SIZE in decimal bytes. Lines starting
//! with `==` are valgrind's messages and are skipped. A reference that crosses
//! a page boundary touches both pages. Everything goes to one address space.
//!
//! Simplification S-TR2: instruction fetches become loads of anonymous pages
//! (text pages are really file-backed and clean; here they go to swap).

use super::layout::AddressPages;
use super::lines::Lines;
use super::{Converted, Options, Sink};
use crate::error::{ErrorKind, TraceError};
use crate::format::{Decl, Event, Record};
use std::io::BufRead;

/// SIM-CHOICE: the largest reference lackey can report is far below this.
const MAX_REF_BYTES: u64 = 1 << 16;

pub(super) fn convert(
    input: &mut dyn BufRead,
    source: &str,
    opts: &Options,
    sink: Sink,
) -> Result<Converted, TraceError> {
    let mut lines = Lines::new(input, source);
    let mut space = AddressPages::new(opts.page_size);
    let (mut messages, mut foreign) = (0u64, 0u64);
    while let Some((at, line)) = lines.next_line()? {
        let (write, rest) = match line.as_bytes() {
            [b'=', b'=', ..] => {
                messages += 1;
                continue;
            }
            [b'I', b' ', b' ', ..] | [b' ', b'L', b' ', ..] => (false, &line[3..]),
            [b' ', b'S' | b'M', b' ', ..] => (true, &line[3..]),
            _ if opts.skip_foreign_lines => {
                foreign += 1;
                continue;
            }
            _ => {
                return Err(at.error(
                    ErrorKind::Malformed,
                    format!("not a lackey line (expected `I  `, ` L `, ` S ` or ` M ` then ADDR,SIZE): {}", clip(line)),
                ))
            }
        };
        let parsed = rest
            .trim()
            .split_once(',')
            .and_then(|(a, s)| Some((u64::from_str_radix(a, 16).ok()?, s.parse::<u64>().ok()?)));
        let Some((addr, size)) = parsed else {
            return Err(at.error(
                ErrorKind::Malformed,
                format!("expected hex ADDR,decimal SIZE after the operation: {}", clip(line)),
            ));
        };
        if size == 0 || size > MAX_REF_BYTES {
            return Err(
                at.error(ErrorKind::Limit, format!("reference size {size} bytes is not in 1..={MAX_REF_BYTES}"))
            );
        }
        let (first, last) = space.page_span(addr, size);
        for vpn in first..=last {
            let page = space.page(vpn).map_err(|m| at.error(ErrorKind::Limit, m))?;
            sink(&Record::at0(Event::Access { space: 0, page, write }))?;
        }
    }
    let spaces = vec![Decl { name: "lackey".into(), pages: space.pages() }];
    Ok((spaces, Vec::new(), vec![("valgrind message lines".into(), messages), ("non-trace lines".into(), foreign)]))
}

/// At most 80 characters of a line, for error messages.
pub(super) fn clip(line: &str) -> String {
    match line.char_indices().nth(80) {
        Some((i, _)) => format!("{}...", &line[..i]),
        None => line.to_string(),
    }
}
