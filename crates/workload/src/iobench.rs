//! mmtests' `parallelio` background IO: a large file copy (memcachetest's
//! store, which it runs beside, is in `memcache`).

use engine::{Access, Program, Step};
use mm::FileId;

/// A file copy: for every page in order, reads page `i` of `src` with
/// `read()` (when there is a source; mmtests' parallelio writes from
/// `/dev/zero`) and writes page `i` of `dst` with `write()`.
pub struct FileCopy {
    src: Option<FileId>,
    dst: FileId,
    pages: u32,
    next: u64,
}

impl FileCopy {
    /// Copies `pages` pages of `src` (or zeroes) to `dst`.
    pub fn new(src: Option<FileId>, dst: FileId, pages: u32) -> FileCopy {
        FileCopy { src, dst, pages, next: 0 }
    }
}

impl Program for FileCopy {
    fn next(&mut self) -> Step {
        let per_page = 1 + self.src.is_some() as u64;
        if self.next >= per_page * self.pages as u64 {
            return Step::Done;
        }
        let page = (self.next / per_page) as u32;
        let read = per_page == 2 && self.next.is_multiple_of(2);
        self.next += 1;
        Step::Access(match self.src {
            Some(src) if read => Access::FileRead { file: src, page },
            _ => Access::FileWrite { file: self.dst, page },
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::test_util::steps;

    #[test]
    fn copy_alternates_read_and_write() {
        let (a, b) = (FileId(0), FileId(1));
        assert_eq!(
            steps(&mut FileCopy::new(None, b, 2)),
            vec![
                Step::Access(Access::FileWrite { file: b, page: 0 }),
                Step::Access(Access::FileWrite { file: b, page: 1 }),
                Step::Done
            ]
        );
        assert_eq!(
            steps(&mut FileCopy::new(Some(a), b, 2)),
            vec![
                Step::Access(Access::FileRead { file: a, page: 0 }),
                Step::Access(Access::FileWrite { file: b, page: 0 }),
                Step::Access(Access::FileRead { file: a, page: 1 }),
                Step::Access(Access::FileWrite { file: b, page: 1 }),
                Step::Done
            ]
        );
    }
}
