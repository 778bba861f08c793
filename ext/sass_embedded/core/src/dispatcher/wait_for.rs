//! The wait_for mode's baton: a caller holds it for its whole compilation,
//! so top-level compilations run one at a time in the process. The baton is
//! reentrant per thread, so a compile nested in a callback runs under its
//! caller's baton.
//!
//! The baton is a bell (see [`crate::wait`]): taking it silences the bell,
//! giving it back rings it. Waiting for it is waiting for the bell's
//! descriptor to become readable, the same kind of wait as every other in
//! the host (interruptible, and Ruby's own).

use crate::sys::Waitable;
use std::cell::Cell;
use std::sync::{Arc, Mutex, PoisonError};

use crate::wait::Bell;

/// The process's baton, rung while nobody holds it, and the fork generation
/// it was made in (a forked child makes its own: the parent may hold the
/// inherited one forever, and the bell's descriptors are left alone).
static BATON: Mutex<Option<(u64, Arc<Bell>)>> = Mutex::new(None);

fn baton() -> std::io::Result<Arc<Bell>> {
    let mut baton = BATON.lock().unwrap_or_else(PoisonError::into_inner);
    let generation = crate::fork::generation();
    if let Some((made_in, bell)) = &*baton {
        if *made_in == generation {
            return Ok(bell.clone());
        }
    }
    let bell = Arc::new(Bell::new()?);
    bell.ring();
    *baton = Some((generation, bell.clone()));
    Ok(bell)
}

thread_local! {
    /// How many compilations of this thread hold the baton (nesting).
    // The initializer is const: clippy 1.97 says otherwise on
    // x86_64-pc-windows-gnu, whose thread locals the macro builds another way.
    #[allow(clippy::missing_const_for_thread_local)]
    static DEPTH: Cell<usize> = const { Cell::new(0) };
}

/// Holding the baton; dropping it gives the baton back when the outermost
/// holder on this thread is done.
#[derive(Debug)]
pub(crate) struct Baton(Arc<Bell>);

impl Drop for Baton {
    fn drop(&mut self) {
        let depth = DEPTH.with(|depth| {
            depth.set(depth.get() - 1);
            depth.get()
        });
        if depth == 0 {
            self.0.ring();
        }
    }
}

/// Takes the baton if this thread holds it already or nobody does; else
/// returns the descriptor that becomes readable when it may be free.
pub(crate) fn try_acquire() -> std::io::Result<Result<Baton, Waitable>> {
    let bell = baton()?;
    if DEPTH.with(Cell::get) == 0 && !bell.take() {
        return Ok(Err(bell.fd()));
    }
    DEPTH.with(|depth| depth.set(depth.get() + 1));
    Ok(Ok(Baton(bell)))
}
