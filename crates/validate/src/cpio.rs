//! A writer of the cpio "newc" archive format, the format the kernel unpacks an
//! initramfs from (Documentation/driver-api/early-userspace/buffer-format.rst).
//!
//! Every header is `070701` and thirteen 8-digit hex fields; the name (with its
//! NUL) and the data are each padded to a multiple of 4 bytes. Timestamps,
//! owners and inode numbers are fixed so that the same entries give the same
//! bytes.

/// One archive member.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Entry {
    /// A directory (mode 0755).
    Dir(String),
    /// A regular file with its permission bits.
    File { path: String, mode: u32, data: Vec<u8> },
    /// A character device node (mode 0600).
    CharDev { path: String, major: u32, minor: u32 },
}

impl Entry {
    fn path(&self) -> &str {
        match self {
            Entry::Dir(p) => p,
            Entry::File { path, .. } | Entry::CharDev { path, .. } => path,
        }
    }
}

const S_IFDIR: u32 = 0o040000;
const S_IFREG: u32 = 0o100000;
const S_IFCHR: u32 = 0o020000;
const TRAILER: &str = "TRAILER!!!";

fn pad4(out: &mut Vec<u8>) {
    while !out.len().is_multiple_of(4) {
        out.push(0);
    }
}

fn header(out: &mut Vec<u8>, ino: u32, mode: u32, nlink: u32, size: usize, rdev: (u32, u32), name: &str) {
    let fields = [ino, mode, 0, 0, nlink, 0, size as u32, 0, 0, rdev.0, rdev.1, name.len() as u32 + 1, 0];
    out.extend_from_slice(b"070701");
    for f in fields {
        out.extend_from_slice(format!("{f:08x}").as_bytes());
    }
    out.extend_from_slice(name.as_bytes());
    out.push(0);
    pad4(out);
}

/// The archive of `entries`, in order, with the trailer. Paths are relative
/// (no leading `/`); a parent directory must come before its members.
pub fn archive(entries: &[Entry]) -> Vec<u8> {
    let mut out = Vec::new();
    for (i, e) in entries.iter().enumerate() {
        let ino = i as u32 + 1;
        let path = e.path().trim_start_matches('/');
        match e {
            Entry::Dir(_) => header(&mut out, ino, S_IFDIR | 0o755, 2, 0, (0, 0), path),
            Entry::File { mode, data, .. } => {
                header(&mut out, ino, S_IFREG | (mode & 0o7777), 1, data.len(), (0, 0), path);
                out.extend_from_slice(data);
                pad4(&mut out);
            }
            Entry::CharDev { major, minor, .. } => header(&mut out, ino, S_IFCHR | 0o600, 1, 0, (*major, *minor), path),
        }
    }
    header(&mut out, 0, 0, 1, 0, (0, 0), TRAILER);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    /// One archive member: name, mode, rdev (major, minor), data.
    type Member = (String, u32, (u32, u32), Vec<u8>);

    /// Reads back (name, mode, rdev, data) of every member: an independent
    /// parser of the format, checking field widths, padding and the trailer.
    fn members(mut b: &[u8]) -> Vec<Member> {
        let total = b.len();
        let mut v = Vec::new();
        loop {
            let at = total - b.len();
            assert_eq!(at % 4, 0, "header at {at} not 4-aligned");
            assert_eq!(&b[..6], b"070701");
            let f =
                |i: usize| u32::from_str_radix(std::str::from_utf8(&b[6 + 8 * i..14 + 8 * i]).unwrap(), 16).unwrap();
            let (mode, size, rdev, namesize) = (f(1), f(6) as usize, (f(9), f(10)), f(11) as usize);
            let name = std::str::from_utf8(&b[110..110 + namesize - 1]).unwrap().to_string();
            assert_eq!(b[110 + namesize - 1], 0);
            let data_at = (110 + namesize).div_ceil(4) * 4;
            let data = b[data_at..data_at + size].to_vec();
            b = &b[(data_at + size).div_ceil(4) * 4..];
            if name == TRAILER {
                assert!(b.is_empty());
                return v;
            }
            v.push((name, mode, rdev, data));
        }
    }

    #[test]
    fn newc_members_read_back() {
        let entries = vec![
            Entry::Dir("dev".into()),
            Entry::CharDev { path: "dev/console".into(), major: 5, minor: 1 },
            Entry::File { path: "/init".into(), mode: 0o755, data: b"#!/bin/sh\n".to_vec() },
            Entry::File { path: "empty".into(), mode: 0o644, data: vec![] },
        ];
        let a = archive(&entries);
        assert_eq!(&a[..6 + 8], b"07070100000001");
        let m = members(&a);
        assert_eq!(m.len(), 4);
        assert_eq!(m[0], ("dev".into(), 0o040755, (0, 0), vec![]));
        assert_eq!(m[1], ("dev/console".into(), 0o020600, (5, 1), vec![]));
        assert_eq!(m[2], ("init".into(), 0o100755, (0, 0), b"#!/bin/sh\n".to_vec()));
        assert_eq!(m[3], ("empty".into(), 0o100644, (0, 0), vec![]));
        assert_eq!(archive(&entries), a, "deterministic");
    }

    #[test]
    fn header_of_a_known_member_byte_for_byte() {
        let a = archive(&[Entry::File { path: "ab".into(), mode: 0o644, data: b"xyz".to_vec() }]);
        let want = "070701".to_string()
            + "00000001"
            + "000081a4"
            + "00000000"
            + "00000000"
            + "00000001"
            + "00000000"
            + "00000003"
            + "00000000"
            + "00000000"
            + "00000000"
            + "00000000"
            + "00000003"
            + "00000000"
            + "ab\0";
        assert_eq!(&a[..want.len()], want.as_bytes());
        // 113 bytes of header and name pad to 116; then "xyz" and one pad byte.
        assert_eq!(&a[113..120], b"\0\0\0xyz\0");
    }
}
