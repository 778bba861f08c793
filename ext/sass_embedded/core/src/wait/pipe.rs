//! Bells made of pipes (see [`super`]): the portable mechanism's, and the
//! reader-thread mechanism's on Unix.

use std::fs::File;
use std::io::{self, Write};
use std::os::fd::{AsFd, AsRawFd, BorrowedFd, RawFd};

use crate::fork::ForkLocal;
use crate::sys;

/// A descriptor that becomes readable when it is rung (a pipe's read end).
/// Ringing is one `write(2)` to the other end, safe from any thread.
#[derive(Debug)]
pub struct Bell {
    read: ForkLocal<File>,
    write: ForkLocal<File>,
}

impl Bell {
    /// A new, silent bell.
    pub fn new() -> io::Result<Self> {
        let (read, write) = sys::pipe()?;
        Ok(Self {
            read: ForkLocal::new(File::from(read)),
            write: ForkLocal::new(File::from(write)),
        })
    }

    /// The descriptor to wait on (readable once rung).
    pub fn fd(&self) -> RawFd {
        self.read.as_raw_fd()
    }

    /// The same descriptor, borrowed.
    pub fn as_fd(&self) -> BorrowedFd<'_> {
        self.read.as_fd()
    }

    /// Rings: the descriptor becomes readable until taken or drained.
    pub fn ring(&self) {
        // A full pipe means it is readable already.
        let _ = (&*self.write).write(&[1]);
    }

    /// Silences the bell (consumes every ring so far); whether it had been
    /// rung.
    pub fn take(&self) -> bool {
        super::consume(&*self.read)
    }

    /// Silences the bell.
    pub fn drain(&self) {
        self.take();
    }
}
