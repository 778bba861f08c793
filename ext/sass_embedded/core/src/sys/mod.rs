//! The core's only `unsafe` code: the few system calls the standard library
//! does not wrap. Each is a thin, documented wrapper; everything built on
//! them is safe Rust. One module per OS family, chosen here and nowhere else
//! (`unix.rs`, `windows.rs`), each offering the same names; the rest of the
//! core speaks only these. On Unix:
//!
//! - [`eventfd`] / [`pipe`]: the descriptors bells (and so kicks and the
//!   wait_for baton) are made of;
//! - [`epoll`] / [`epoll_add`]: on Linux, the one descriptor the watcher
//!   sleeps on (see [`crate::wait`]);
//! - [`set_nonblocking`]: the host's ends of the compiler's pipes never block
//!   a caller ([`set_blocking`]: but the reader thread's, which blocks it);
//! - [`pipe_unread`]: how much of what the host wrote a compiler that died
//!   never read (on Windows, asked of a read end: `input_pipe` makes the
//!   compiler's stdin there);
//! - [`fork_generation`]: which side of a `fork` this is, without a system
//!   call per question;
//! - [`poll`]: how a thread without Ruby (the raw benchmark, the tests, the
//!   built-in executor) waits for descriptors;
//! - [`die_with_parent`]: on Linux, the compiler is killed by the kernel when
//!   the host's process ends, however it ends;
//! - `tokio_async_fd`: registering a descriptor with tokio's reactor (with
//!   the `tokio` feature).

#[cfg(unix)]
mod unix;
#[cfg(unix)]
pub use unix::*;
#[cfg(windows)]
mod windows;
#[cfg(windows)]
pub use windows::*;

/// Which readiness to wait for.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Interest {
    /// Readable (or at its end, or in error).
    Read,
    /// Writable (or in error).
    Write,
}
