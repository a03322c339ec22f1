//! Shared body of the converter fuzz targets.

use trace::convert::{convert, Format, Options, PagesAs};
use trace::{Header, TraceWriter};

/// Converts `data` from `format`: errors are fine, panics are bugs. Every
/// record a converter emits must also pass the writer's checks against the
/// declarations the converter returns.
pub fn check(format: Format, data: &[u8]) {
    let pages_as = if data.first().is_some_and(|b| b & 1 == 1) { PagesAs::File } else { PagesAs::Anon };
    let opts = Options { pages_as, ..Options::default() };
    let mut records = Vec::new();
    let Ok(outline) = convert(format, &mut &data[..], "fuzz", &opts, &mut |r| {
        records.push(*r);
        Ok(())
    }) else {
        return;
    };
    let header = Header { compressed: false, ..outline.header };
    let mut w = TraceWriter::new(Vec::new(), header, 1, "fuzz").expect("converter headers respect the limits");
    for r in &records {
        w.write(r).expect("converter records fit their declarations");
    }
    w.finish().expect("writing to memory");
}
