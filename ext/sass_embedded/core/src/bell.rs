//! Bells: what a waiting caller sleeps on. A bell is a file descriptor that
//! becomes readable when it is rung (an eventfd on Linux, a pipe elsewhere),
//! so a caller can wait on it the way its runtime waits for I/O: Ruby's fd
//! wait (which takes part in signal handling and goes through a fiber
//! scheduler), or `poll(2)`. Ringing is one `write(2)`, safe from any thread
//! and from a signal handler.
//!
//! Bells are pooled: a compilation that has to wait for another caller to
//! read its messages takes one, and gives it back when it is done, so the
//! common case costs no system call to make or close one.

use std::fs::File;
use std::io::{self, Read, Write};
use std::ops::Deref;
#[cfg(target_os = "linux")]
use std::os::fd::OwnedFd;
use std::os::fd::{AsFd, AsRawFd, BorrowedFd, RawFd};
use std::sync::{Arc, Mutex, PoisonError};

use crate::sys;

/// A pollable wake-up.
#[derive(Debug)]
pub struct Bell {
    /// The end a waiter polls for reading.
    read: File,
    /// Where a ring is written: the same eventfd, or the pipe's write end.
    write: File,
}

impl Bell {
    /// A new, silent bell.
    pub fn new() -> io::Result<Self> {
        #[cfg(target_os = "linux")]
        {
            let fd: OwnedFd = sys::eventfd()?;
            let write = File::from(fd.try_clone()?);
            Ok(Self {
                read: File::from(fd),
                write,
            })
        }
        #[cfg(not(target_os = "linux"))]
        {
            let (read, write) = sys::pipe()?;
            Ok(Self {
                read: File::from(read),
                write: File::from(write),
            })
        }
    }

    /// The descriptor to wait on (readable once rung).
    pub fn fd(&self) -> RawFd {
        self.read.as_raw_fd()
    }

    /// The same descriptor, borrowed.
    pub fn as_fd(&self) -> BorrowedFd<'_> {
        self.read.as_fd()
    }

    /// Rings: the descriptor becomes readable until [`drain`](Self::drain)ed.
    pub fn ring(&self) {
        // A full pipe or a saturated counter means it is readable already.
        let _ = (&self.write).write(&1u64.to_ne_bytes());
    }

    /// Silences the bell (consumes every ring so far).
    pub fn drain(&self) {
        let mut buf = [0u8; 64];
        while matches!((&self.read).read(&mut buf), Ok(n) if n > 0) {}
    }
}

/// Bells kept for reuse, and the fork generation they belong to (a forked
/// child must not share its parent's).
static POOL: Mutex<(u64, Vec<Bell>)> = Mutex::new((0, Vec::new()));

/// How many idle bells the pool keeps.
const POOL_LIMIT: usize = 64;

/// A bell from the pool, given back when the last reference goes.
#[derive(Debug)]
pub struct PooledBell(Option<Bell>);

impl PooledBell {
    /// A silent bell, from the pool if it has one.
    pub fn take() -> io::Result<Arc<Self>> {
        let pooled = {
            let mut pool = POOL.lock().unwrap_or_else(PoisonError::into_inner);
            let generation = sys::fork_generation();
            if pool.0 != generation {
                // Inherited through fork: the parent may ring these.
                *pool = (generation, Vec::new());
            }
            pool.1.pop()
        };
        let bell = match pooled {
            Some(bell) => bell,
            None => Bell::new()?,
        };
        Ok(Arc::new(Self(Some(bell))))
    }
}

impl Deref for PooledBell {
    type Target = Bell;

    fn deref(&self) -> &Bell {
        self.0
            .as_ref()
            .expect("a pooled bell is present until dropped")
    }
}

impl Drop for PooledBell {
    fn drop(&mut self) {
        let Some(bell) = self.0.take() else { return };
        bell.drain();
        let mut pool = POOL.lock().unwrap_or_else(PoisonError::into_inner);
        if pool.0 == sys::fork_generation() && pool.1.len() < POOL_LIMIT {
            pool.1.push(bell);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sys::{wait_fd, Interest};
    use std::time::Duration;

    #[test]
    fn a_bell_is_readable_from_ring_to_drain() {
        let bell = Bell::new().unwrap();
        assert!(!wait_fd(bell.fd(), Interest::Read, Some(Duration::ZERO)).unwrap());
        bell.ring();
        bell.ring();
        assert!(wait_fd(bell.fd(), Interest::Read, Some(Duration::ZERO)).unwrap());
        bell.drain();
        assert!(!wait_fd(bell.fd(), Interest::Read, Some(Duration::ZERO)).unwrap());
    }

    #[test]
    fn a_ring_from_another_thread_wakes_a_waiter() {
        let bell = Arc::new(Bell::new().unwrap());
        let ringer = {
            let bell = bell.clone();
            std::thread::spawn(move || {
                std::thread::sleep(Duration::from_millis(20));
                bell.ring();
            })
        };
        assert!(wait_fd(bell.fd(), Interest::Read, Some(Duration::from_secs(10))).unwrap());
        ringer.join().unwrap();
    }

    #[test]
    fn pooled_bells_come_back_silent() {
        let bell = PooledBell::take().unwrap();
        let fd = bell.fd();
        bell.ring();
        drop(bell);
        let again = PooledBell::take().unwrap();
        if again.fd() == fd {
            assert!(!wait_fd(again.fd(), Interest::Read, Some(Duration::ZERO)).unwrap());
        }
    }
}
