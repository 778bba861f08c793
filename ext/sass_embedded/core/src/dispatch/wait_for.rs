//! The wait_for mode's baton: a caller holds it for its whole compilation,
//! so top-level compilations run one at a time in the process. The baton is
//! reentrant per thread, so a compile nested in a callback runs under its
//! caller's baton.
//!
//! The baton is one byte in a pipe: taking it is a non-blocking read of that
//! byte, giving it back writes it again. Waiting for it is waiting for the
//! pipe to become readable, the same kind of wait as every other in the
//! host (interruptible, and Ruby's own).

use std::cell::Cell;
use std::fs::File;
use std::io::{Read, Write};
use std::os::fd::{AsRawFd, RawFd};
use std::sync::{Arc, Mutex, PoisonError};

/// The pipe holding the baton while nobody has it.
#[derive(Debug)]
struct Pipe {
    read: File,
    write: File,
}

/// The process's baton, and the fork generation it was made in (a forked
/// child makes its own: the parent may hold the inherited one forever).
static BATON: Mutex<Option<(u64, Arc<Pipe>)>> = Mutex::new(None);

fn pipe() -> std::io::Result<Arc<Pipe>> {
    let mut baton = BATON.lock().unwrap_or_else(PoisonError::into_inner);
    let generation = crate::sys::fork_generation();
    if let Some((made_in, pipe)) = &*baton {
        if *made_in == generation {
            return Ok(pipe.clone());
        }
    }
    let (read, write) = crate::sys::pipe()?;
    let pipe = Arc::new(Pipe {
        read: File::from(read),
        write: File::from(write),
    });
    (&pipe.write).write_all(&[1])?;
    *baton = Some((generation, pipe.clone()));
    Ok(pipe)
}

thread_local! {
    /// How many compilations of this thread hold the baton (nesting).
    static DEPTH: Cell<usize> = const { Cell::new(0) };
}

/// Holding the baton; dropping it gives the baton back when the outermost
/// holder on this thread is done.
#[derive(Debug)]
pub(crate) struct Baton(Arc<Pipe>);

impl Drop for Baton {
    fn drop(&mut self) {
        let depth = DEPTH.with(|depth| {
            depth.set(depth.get() - 1);
            depth.get()
        });
        if depth == 0 {
            let _ = (&self.0.write).write_all(&[1]);
        }
    }
}

/// Takes the baton if this thread holds it already or nobody does; else
/// returns the descriptor that becomes readable when it may be free.
pub(crate) fn try_acquire() -> std::io::Result<Result<Baton, RawFd>> {
    let pipe = pipe()?;
    if DEPTH.with(Cell::get) == 0 {
        let mut token = [0u8; 1];
        match (&pipe.read).read(&mut token) {
            Ok(1) => {}
            Ok(_) => return Err(std::io::ErrorKind::UnexpectedEof.into()),
            Err(error) if error.kind() == std::io::ErrorKind::WouldBlock => {
                return Ok(Err(pipe.read.as_raw_fd()))
            }
            Err(error) => return Err(error),
        }
    }
    DEPTH.with(|depth| depth.set(depth.get() + 1));
    Ok(Ok(Baton(pipe)))
}
