//! Writing to the compiler: any caller writes its packet to the compiler's
//! stdin, whole and in order, without ever blocking. On Unix the caller
//! writes straight to the non-blocking pipe; what a full pipe does not take
//! at once is queued, and a task on the executor writes the rest when the
//! pipe drains; packets sent meanwhile queue behind it. On Windows, where
//! an anonymous pipe cannot be non-blocking, every packet is queued and a
//! writer thread writes them. One module per OS, chosen here. A
//! caller interrupted mid-write therefore never leaves half a packet, and a
//! compiler that stops reading (stopped, wedged) blocks nobody.
//!
//! It counts the bytes it takes and writes, so that when the compiler ends,
//! the host can tell which requests it never read (see
//! [`Outbox::read_position`]): those run again on another compiler.

use std::io;

#[cfg(unix)]
#[path = "unix.rs"]
mod os;
#[cfg(windows)]
#[path = "windows.rs"]
mod os;

pub(crate) use os::Outbox;

/// What the outbox calls when writing fails (the compiler stopped reading).
pub(crate) type OnFailure = Box<dyn Fn(io::Error) + Send + Sync>;
