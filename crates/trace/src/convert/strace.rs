//! strace logs (`strace -o LOG [-f] [-tt|-ttt|-r] CMD`) to file page accesses.
//!
//! A line is `[PID|[pid PID]] [TIMESTAMP] NAME(ARGS) = RESULT ...`. We follow
//! file descriptors: `open`/`openat`/`creat` bind a descriptor to a file (one
//! file per path) at offset 0, `close` unbinds it, `lseek` sets the offset;
//! `read`/`write` touch the pages of `[offset, offset + result)` and advance
//! the offset, `pread64`/`pwrite64` touch `[off, off + result)`. `mmap` of a
//! bound descriptor and the `munmap` of that address become mmap/munmap
//! records; `+++ exited` becomes an exit record. Other calls, failed calls and
//! calls on descriptors not opened in the log (stdin, pipes, sockets) are
//! skipped and counted.
//!
//! Simplifications S-TR3: `dup`, `fork` sharing of offsets, `O_APPEND` and
//! vectored I/O are not followed; `<unfinished ...>`/`resumed>` pairs are
//! skipped; timestamps are dropped.

use super::lines::Lines;
use super::{lackey::clip, Converted, Options, Sink};
use crate::error::{ErrorKind, TraceError};
use crate::format::{Decl, Event, Record, MAX_DECLS, MAX_TOTAL_PAGES};
use std::collections::BTreeMap;
use std::io::BufRead;

#[derive(Default)]
struct State {
    files: Vec<Decl>,
    by_path: BTreeMap<String, u16>,
    /// Descriptor -> (file, byte offset).
    fds: BTreeMap<i64, (u16, u64)>,
    /// Mapping address -> (file, first page, pages).
    maps: BTreeMap<u64, (u16, u32, u32)>,
    skipped: BTreeMap<&'static str, u64>,
}

/// A parsed call: name, top-level arguments, result (`None` if `?` or failed).
struct Call<'a> {
    name: &'a str,
    args: Vec<&'a str>,
    result: Option<i64>,
}

/// Splits `NAME(ARGS) = RESULT`; `Err` describes what is malformed.
fn parse_call(s: &str) -> Result<Call<'_>, String> {
    let open = s.find('(').ok_or("expected NAME(ARGS) = RESULT")?;
    let name = &s[..open];
    if name.is_empty() || !name.bytes().all(|c| c.is_ascii_alphanumeric() || c == b'_') {
        return Err(format!("`{}` is not a system call name", clip(name)));
    }
    let mut args = Vec::new();
    let (mut depth, mut quoted, mut escaped, mut start) = (0i32, false, false, open + 1);
    let mut close = None;
    for (i, c) in s.char_indices().skip(open + 1) {
        if quoted {
            match (escaped, c) {
                (true, _) => escaped = false,
                (false, '\\') => escaped = true,
                (false, '"') => quoted = false,
                _ => {}
            }
            continue;
        }
        match c {
            '"' => quoted = true,
            '(' | '[' | '{' => depth += 1,
            ')' if depth == 0 => {
                close = Some(i);
                break;
            }
            ')' | ']' | '}' => depth -= 1,
            ',' if depth == 0 => {
                args.push(s[start..i].trim());
                start = i + 1;
            }
            _ => {}
        }
    }
    let close = close.ok_or("unbalanced parentheses or quotes in the arguments")?;
    let last = s[start..close].trim();
    if !last.is_empty() || !args.is_empty() {
        args.push(last);
    }
    let rest = s[close + 1..].trim_start();
    let result = rest
        .strip_prefix('=')
        .ok_or("expected ` = RESULT` after the arguments")?
        .split_ascii_whitespace()
        .next()
        .ok_or("missing result after `=`")?;
    let result = if result == "?" {
        None
    } else if let Some(h) = result.strip_prefix("0x") {
        Some(i64::from_str_radix(h, 16).map_err(|_| format!("bad hex result `{result}`"))?)
    } else {
        Some(result.parse::<i64>().map_err(|_| format!("bad result `{result}`"))?).filter(|&r| r >= 0)
    };
    Ok(Call { name, args, result })
}

fn int(arg: Option<&&str>) -> Option<i64> {
    let a = arg?;
    match a.strip_prefix("0x") {
        Some(h) => i64::from_str_radix(h, 16).ok(),
        None => a.parse().ok(),
    }
}

fn path(arg: Option<&&str>) -> Option<String> {
    let a = arg?;
    let inner = a.strip_prefix('"')?;
    // strace marks truncated strings with `...` after the closing quote.
    let inner = inner.strip_suffix("\"...").or_else(|| inner.strip_suffix('"'))?;
    Some(inner.to_string())
}

impl State {
    fn skip(&mut self, why: &'static str) {
        *self.skipped.entry(why).or_default() += 1;
    }

    fn file(&mut self, p: String) -> Result<u16, String> {
        if let Some(&f) = self.by_path.get(&p) {
            return Ok(f);
        }
        if self.files.len() >= MAX_DECLS as usize {
            return Err(format!("more than {MAX_DECLS} files"));
        }
        let f = self.files.len() as u16;
        self.files.push(Decl { name: p.clone(), pages: 0 });
        self.by_path.insert(p, f);
        Ok(f)
    }

    /// Pages `first..first+n` covering bytes `[off, off + len)`, growing the file's size.
    fn pages(&mut self, file: u16, off: u64, len: u64, page_size: u32) -> Result<(u32, u32), String> {
        let ps = page_size as u64;
        let (first, end) = (off / ps, off.checked_add(len).ok_or("offset overflows")?.div_ceil(ps));
        if end > MAX_TOTAL_PAGES {
            return Err(format!(
                "byte range {off}+{len} reaches page {end}, beyond the limit of {MAX_TOTAL_PAGES} pages"
            ));
        }
        let d = &mut self.files[file as usize];
        d.pages = d.pages.max(end as u32);
        Ok((first as u32, (end - first) as u32))
    }

    fn call(&mut self, c: &Call, page_size: u32) -> Result<Option<Event>, String> {
        let Some(ret) = c.result else {
            self.skip("failed calls");
            return Ok(None);
        };
        let fd_arg = int(c.args.first());
        match c.name {
            "open" | "creat" | "openat" => {
                let p = path(c.args.get(if c.name == "openat" { 1 } else { 0 }))
                    .ok_or("expected a quoted path argument")?;
                let f = self.file(p)?;
                self.fds.insert(ret, (f, 0));
                Ok(None)
            }
            "close" => {
                self.fds.remove(&fd_arg.ok_or("expected a descriptor")?);
                Ok(None)
            }
            "lseek" => {
                if let Some(e) = self.fds.get_mut(&fd_arg.ok_or("expected a descriptor")?) {
                    e.1 = ret as u64;
                }
                Ok(None)
            }
            "read" | "write" | "pread64" | "pwrite64" => {
                let Some(&(file, off)) = self.fds.get(&fd_arg.ok_or("expected a descriptor")?) else {
                    self.skip("calls on descriptors not opened in the log");
                    return Ok(None);
                };
                let positional = c.name.starts_with('p');
                let off = if positional {
                    int(c.args.get(3)).filter(|&o| o >= 0).ok_or("expected an offset as the 4th argument")? as u64
                } else {
                    off
                };
                if !positional {
                    self.fds.insert(fd_arg.expect("checked above"), (file, off + ret as u64));
                }
                if ret == 0 {
                    return Ok(None);
                }
                let (page, pages) = self.pages(file, off, ret as u64, page_size)?;
                Ok(Some(if c.name.ends_with("read") || c.name.ends_with("read64") {
                    Event::FileRead { file, page, pages }
                } else {
                    Event::FileWrite { file, page, pages }
                }))
            }
            "mmap" | "mmap2" => {
                let fd = int(c.args.get(4)).ok_or("expected a descriptor as the 5th argument")?;
                let Some(&(file, _)) = self.fds.get(&fd) else {
                    self.skip("anonymous or untracked mmaps");
                    return Ok(None);
                };
                let len = int(c.args.get(1)).filter(|&l| l > 0).ok_or("expected a length as the 2nd argument")? as u64;
                let off =
                    int(c.args.get(5)).filter(|&o| o >= 0).ok_or("expected an offset as the 6th argument")? as u64;
                let (page, pages) = self.pages(file, off, len, page_size)?;
                self.maps.insert(ret as u64, (file, page, pages));
                Ok(Some(Event::Mmap { file, page, pages }))
            }
            "munmap" => match self.maps.remove(&(int(c.args.first()).ok_or("expected an address")? as u64)) {
                Some((file, page, pages)) => Ok(Some(Event::Munmap { file, page, pages })),
                None => {
                    self.skip("munmaps of untracked mappings");
                    Ok(None)
                }
            },
            _ => {
                self.skip("other system calls");
                Ok(None)
            }
        }
    }
}

/// Drops a leading `PID`, `[pid PID]` and timestamp (`12:34:56.789`, `1700000000.123`, ` 0.000123`).
fn strip_prefixes(mut s: &str) -> &str {
    for _ in 0..3 {
        s = s.trim_start();
        if let Some(r) = s.strip_prefix("[pid") {
            if let Some(end) = r.find(']') {
                s = &r[end + 1..];
                continue;
            }
        }
        let tok_end = s.find(|c: char| c.is_ascii_whitespace()).unwrap_or(s.len());
        let tok = &s[..tok_end];
        if tok_end < s.len() && !tok.is_empty() && tok.bytes().all(|c| c.is_ascii_digit() || c == b':' || c == b'.') {
            s = &s[tok_end..];
        } else {
            break;
        }
    }
    s.trim_start()
}

pub(super) fn convert(
    input: &mut dyn BufRead,
    source: &str,
    opts: &Options,
    sink: Sink,
) -> Result<Converted, TraceError> {
    let mut lines = Lines::new(input, source);
    let mut st = State::default();
    while let Some((at, line)) = lines.next_line()? {
        let s = strip_prefixes(line);
        if s.is_empty() {
            continue;
        }
        if s.starts_with("+++ exited") || s.starts_with("+++ killed") {
            sink(&Record::at0(Event::Exit))?;
            continue;
        }
        if s.starts_with("---") || s.starts_with("+++") {
            st.skip("signal lines");
            continue;
        }
        if s.starts_with("<...") || s.contains("<unfinished ...>") {
            st.skip("unfinished/resumed call pieces");
            continue;
        }
        let call = parse_call(s).map_err(|m| at.error(ErrorKind::Malformed, format!("{m}: {}", clip(line))))?;
        if let Some(e) =
            st.call(&call, opts.page_size).map_err(|m| at.error(ErrorKind::Malformed, format!("{}: {m}", call.name)))?
        {
            sink(&Record::at0(e))?;
        }
    }
    let skipped = st.skipped.iter().map(|(k, v)| (k.to_string(), *v)).collect();
    Ok((Vec::new(), st.files, skipped))
}
