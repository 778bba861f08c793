//! The portable mechanism (see [`super`]): bells are pipes, and the watcher
//! sleeps with `poll(2)` semantics on two descriptors, the compiler's stdout
//! and the kick's read end. Nothing is consumed by waiting on them, so the
//! kick stays readable until the watcher itself silences it, whoever else
//! reads the output meanwhile. (A kqueue would consume the kick's event for
//! whoever polled it first; this needs no kernel interface but `poll`.)

use std::fs::File;
use std::io::{self, Read, Write};
use std::os::fd::{AsFd, AsRawFd, BorrowedFd, RawFd};

use super::{Fds, Kick};
use crate::fork::ForkLocal;
use crate::sys;

/// The name of this mechanism, for `Sass::Embedded` diagnostics and tests.
pub const MECHANISM: &str = "poll";

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
        let mut buf = [0u8; 64];
        let mut rung = false;
        while let Ok(n) = (&*self.read).read(&mut buf) {
            if n == 0 {
                break;
            }
            rung = true;
        }
        rung
    }

    /// Silences the bell.
    pub fn drain(&self) {
        self.take();
    }
}

/// What the watcher sleeps on: the compiler's stdout and the kick, both
/// waited on for readability.
#[derive(Debug)]
pub(crate) struct Selector {
    stdout: RawFd,
    kick: RawFd,
}

impl Selector {
    /// A selector for `stdout` and `kick` (both must outlive it).
    pub(crate) fn new(stdout: BorrowedFd<'_>, kick: &Kick) -> io::Result<Self> {
        Ok(Self {
            stdout: stdout.as_raw_fd(),
            kick: kick.bell().fd(),
        })
    }

    /// What to wait on.
    pub(crate) fn fds(&self) -> Fds {
        Fds::two(self.stdout, self.kick)
    }
}
