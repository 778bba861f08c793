//! The Linux mechanism (see [`super`]): bells are eventfds, and the watcher
//! sleeps on one epoll instance holding the compiler's stdout and the kick.
//! An epoll descriptor is readable exactly while one of its members is (the
//! kernel checks each ready member again when asked), so nothing needs to
//! consume its events: whoever reads the output leaves the kick alone.

use std::fs::File;
use std::io::{self, Read, Write};
use std::os::fd::{AsFd, AsRawFd, BorrowedFd, OwnedFd, RawFd};

use super::{Fds, Kick};
use crate::fork::ForkLocal;
use crate::sys;

/// The name of this mechanism, for `Sass::Embedded` diagnostics and tests.
pub const MECHANISM: &str = "epoll";

/// A descriptor that becomes readable when it is rung (an eventfd). Ringing
/// is one `write(2)`, safe from any thread.
#[derive(Debug)]
pub struct Bell(ForkLocal<File>);

impl Bell {
    /// A new, silent bell.
    pub fn new() -> io::Result<Self> {
        Ok(Self(ForkLocal::new(File::from(sys::eventfd()?))))
    }

    /// The descriptor to wait on (readable once rung).
    pub fn fd(&self) -> RawFd {
        self.0.as_raw_fd()
    }

    /// The same descriptor, borrowed.
    pub fn as_fd(&self) -> BorrowedFd<'_> {
        self.0.as_fd()
    }

    /// Rings: the descriptor becomes readable until taken or drained.
    pub fn ring(&self) {
        // A saturated counter means it is readable already.
        let _ = (&*self.0).write(&1u64.to_ne_bytes());
    }

    /// Silences the bell; whether it had been rung.
    pub fn take(&self) -> bool {
        let mut counter = [0u8; 8];
        matches!((&*self.0).read(&mut counter), Ok(8))
    }

    /// Silences the bell (consumes every ring so far).
    pub fn drain(&self) {
        self.take();
    }
}

/// What the watcher sleeps on: one epoll descriptor, readable while the
/// compiler's stdout is or the kick was rung.
#[derive(Debug)]
pub(crate) struct Selector(ForkLocal<OwnedFd>);

impl Selector {
    /// A selector for `stdout` and `kick` (both must outlive it).
    pub(crate) fn new(stdout: &File, kick: &Kick) -> io::Result<Self> {
        let epoll = sys::epoll()?;
        sys::epoll_add(epoll.as_fd(), stdout.as_fd())?;
        sys::epoll_add(epoll.as_fd(), kick.bell().as_fd())?;
        Ok(Self(ForkLocal::new(epoll)))
    }

    /// What to wait on.
    pub(crate) fn fds(&self) -> Fds {
        Fds::one(self.0.as_raw_fd())
    }
}

/// The compiler's output as a reader thread reads it: none here, the
/// callers read it themselves.
pub(crate) fn thread_output(_stdout: &std::fs::File) -> io::Result<Option<std::fs::File>> {
    Ok(None)
}
