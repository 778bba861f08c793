//! The reader-thread mechanism (see [`super`]): a host thread of each
//! connection reads the compiler's output with blocking reads and routes
//! every packet; no caller reads it. The watcher sleeps on the kick alone,
//! which the reader rings whenever it hands the watcher a message or queues
//! a wake-up for the runtime (the watcher, back in its runtime, wakes the
//! parked callers, as under the other mechanisms). So a caller waits only
//! on a bell, never on the compiler's pipe: what Windows needs, where a
//! Ruby thread cannot wait on an anonymous pipe, and what Linux builds with
//! the `reader-wait` feature so that every test runs through it.
//!
//! Bells are pipes here. The cost is a thread per compiler and one hop more
//! per message (the reader, then the kick).

use std::fs::File;
use std::io;

pub use super::bell::Bell;
use super::{Fds, Kick};
use crate::sys::{self, Waitable};

/// The name of this mechanism, for `Sass::Embedded` diagnostics and tests.
pub const MECHANISM: &str = "reader";

/// What the watcher sleeps on: the kick alone.
#[derive(Debug)]
pub(crate) struct Selector {
    kick: Waitable,
}

impl Selector {
    /// A selector for `kick` (which must outlive it); the reader thread
    /// reads `stdout`.
    pub(crate) fn new(_stdout: &File, kick: &Kick) -> io::Result<Self> {
        Ok(Self {
            kick: kick.bell().fd(),
        })
    }

    /// What to wait on.
    pub(crate) fn fds(&self) -> Fds {
        Fds::one(self.kick)
    }
}

/// The compiler's output as the reader thread reads it: a handle of its
/// own, blocking (no caller reads the output, so the flag they share does
/// not matter to anyone else).
pub(crate) fn thread_output(stdout: &File) -> io::Result<Option<File>> {
    let output = stdout.try_clone()?;
    sys::set_blocking(&output)?;
    Ok(Some(output))
}
