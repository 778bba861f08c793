//! The portable mechanism (see [`super`]): bells are pipes, and the watcher
//! sleeps with `poll(2)` semantics on two descriptors, the compiler's stdout
//! and the kick's read end. Nothing is consumed by waiting on them, so the
//! kick stays readable until the watcher itself silences it, whoever else
//! reads the output meanwhile. (A kqueue would consume the kick's event for
//! whoever polled it first; this needs no kernel interface but `poll`.)

use std::io;
use std::os::fd::{AsRawFd, RawFd};

pub use super::bell::Bell;
use super::{Fds, Kick};

/// The name of this mechanism, for `Sass::Embedded` diagnostics and tests.
pub const MECHANISM: &str = "poll";

/// What the watcher sleeps on: the compiler's stdout and the kick, both
/// waited on for readability.
#[derive(Debug)]
pub(crate) struct Selector {
    stdout: RawFd,
    kick: RawFd,
}

impl Selector {
    /// A selector for `stdout` and `kick` (both must outlive it).
    pub(crate) fn new(stdout: &std::fs::File, kick: &Kick) -> io::Result<Self> {
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

/// The compiler's output as a reader thread reads it: none here, the
/// callers read it themselves.
pub(crate) fn thread_output(_stdout: &std::fs::File) -> io::Result<Option<std::fs::File>> {
    Ok(None)
}
