//! Plain page-number traces (`pages`, as in the LIRS papers) and hex address
//! traces (`addresses`, as in the SPEC CPU2000 address traces).

use super::layout::AddressPages;
use super::lines::Lines;
use super::{lackey::clip, Converted, Options, PagesAs, Sink};
use crate::error::{ErrorKind, TraceError};
use crate::format::{Decl, Event, Record, MAX_TOTAL_PAGES};
use std::io::BufRead;

/// `--from pages`: `PAGE` or `PAGE W` per line (`R` is also accepted); `*`
/// lines (checkpoint markers of the LIRS tools) and blank lines are skipped.
/// Page numbers are kept as they are: the space or file has max + 1 pages.
pub(super) fn convert_pages(
    input: &mut dyn BufRead,
    source: &str,
    opts: &Options,
    sink: Sink,
) -> Result<Converted, TraceError> {
    let mut lines = Lines::new(input, source);
    let mut size = 0u32;
    let mut markers = 0u64;
    while let Some((at, line)) = lines.next_line()? {
        let mut tok = line.split_ascii_whitespace();
        let Some(first) = tok.next() else { continue };
        if first == "*" {
            markers += 1;
            continue;
        }
        let page: u64 = first
            .parse()
            .map_err(|_| at.error(ErrorKind::Malformed, format!("expected a decimal page number: {}", clip(line))))?;
        if page >= MAX_TOTAL_PAGES {
            return Err(
                at.error(ErrorKind::Limit, format!("page {page} is beyond the limit of {MAX_TOTAL_PAGES} pages"))
            );
        }
        let write = match (tok.next(), tok.next()) {
            (None, _) | (Some("R" | "r"), None) => false,
            (Some("W" | "w"), None) => true,
            _ => return Err(at.error(ErrorKind::Malformed, format!("expected `PAGE` or `PAGE W`: {}", clip(line)))),
        };
        let page = page as u32;
        size = size.max(page + 1);
        let event = match opts.pages_as {
            PagesAs::Anon => Event::Access { space: 0, page, write },
            PagesAs::File if write => Event::FileWrite { file: 0, page, pages: 1 },
            PagesAs::File => Event::FileRead { file: 0, page, pages: 1 },
        };
        sink(&Record::at0(event))?;
    }
    let decl = vec![Decl { name: "pages".into(), pages: size }];
    let skipped = vec![("`*` marker lines".into(), markers)];
    Ok(match opts.pages_as {
        PagesAs::Anon => (decl, Vec::new(), skipped),
        PagesAs::File => (Vec::new(), decl, skipped),
    })
}

/// `--from addresses`: `ADDR`, `ADDR W|R`, or `l|s ADDR [N]` (load/store, then
/// anything numeric, as in the SPEC CPU2000 traces); ADDR in hex with or without `0x`.
pub(super) fn convert_addresses(
    input: &mut dyn BufRead,
    source: &str,
    opts: &Options,
    sink: Sink,
) -> Result<Converted, TraceError> {
    let mut lines = Lines::new(input, source);
    let mut space = AddressPages::new(opts.page_size);
    while let Some((at, line)) = lines.next_line()? {
        let tok: Vec<&str> = line.split_ascii_whitespace().collect();
        let bad = || {
            at.error(
                ErrorKind::Malformed,
                format!("expected `ADDR`, `ADDR W` or `l|s ADDR [N]` with ADDR in hex: {}", clip(line)),
            )
        };
        let (addr, write) = match tok.as_slice() {
            [] => continue,
            [op @ ("l" | "s" | "L" | "S"), a, rest @ ..]
                if rest.len() <= 1 && rest.iter().all(|n| n.parse::<u64>().is_ok()) =>
            {
                (*a, op.eq_ignore_ascii_case("s"))
            }
            [a] => (*a, false),
            [a, "W" | "w"] => (*a, true),
            [a, "R" | "r"] => (*a, false),
            _ => return Err(bad()),
        };
        let hex = addr.strip_prefix("0x").or_else(|| addr.strip_prefix("0X")).unwrap_or(addr);
        let addr = u64::from_str_radix(hex, 16).map_err(|_| bad())?;
        let page = space.page(space.page_span(addr, 1).0).map_err(|m| at.error(ErrorKind::Limit, m))?;
        sink(&Record::at0(Event::Access { space: 0, page, write }))?;
    }
    Ok((vec![Decl { name: "addresses".into(), pages: space.pages() }], Vec::new(), Vec::new()))
}
