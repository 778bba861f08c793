//! What a forked child does with the host it inherited: nothing at all.
//!
//! A child of `fork` starts with copies of the parent's descriptors under the
//! same numbers, and a program that forks often closes them all and opens its
//! own (daemonizers close every descriptor from 3 up), so a number the host
//! held before the fork may name one of the application's files by the time
//! the host's copy would be dropped. Closing it then closes the
//! application's file; reading or writing it (draining a bell, waking a
//! runtime) reads or writes the application's data.
//!
//! So whatever holds a descriptor is a [`ForkLocal`]: dropped normally in the
//! process that made it, and leaked in a forked child, which therefore never
//! closes, reads or writes a descriptor number it no longer owns. The child
//! starts hosts of its own; what it inherited stays open and untouched until
//! it execs (every host descriptor is close-on-exec) or exits.

use std::fmt;
use std::ops::{Deref, DerefMut};

/// How many forks separate this process from the one that made the first
/// host (see [`crate::sys::fork_generation`]): what was made at generation
/// `n` belongs to this process only while the generation is still `n`.
pub fn generation() -> u64 {
    crate::sys::fork_generation()
}

/// A value owned by the process that made it: dropped there as usual, never
/// dropped (leaked) in a forked child.
pub struct ForkLocal<T> {
    value: Option<T>,
    generation: u64,
}

impl<T> ForkLocal<T> {
    /// Wraps `value`, made in this process.
    pub fn new(value: T) -> Self {
        Self {
            value: Some(value),
            generation: generation(),
        }
    }

    /// Whether this process is a forked child of the one that made the value.
    pub fn is_inherited(&self) -> bool {
        self.generation != generation()
    }
}

impl<T> Deref for ForkLocal<T> {
    type Target = T;

    fn deref(&self) -> &T {
        self.value
            .as_ref()
            .expect("a fork-local value is present until dropped")
    }
}

impl<T> DerefMut for ForkLocal<T> {
    fn deref_mut(&mut self) -> &mut T {
        self.value
            .as_mut()
            .expect("a fork-local value is present until dropped")
    }
}

impl<T: fmt::Debug> fmt::Debug for ForkLocal<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.value.fmt(f)
    }
}

impl<T> Drop for ForkLocal<T> {
    fn drop(&mut self) {
        if self.is_inherited() {
            std::mem::forget(self.value.take());
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::{AtomicUsize, Ordering};
    use std::sync::Arc;

    struct Counted(Arc<AtomicUsize>);

    impl Drop for Counted {
        fn drop(&mut self) {
            self.0.fetch_add(1, Ordering::SeqCst);
        }
    }

    #[test]
    fn a_value_made_here_is_dropped_here() {
        let drops = Arc::new(AtomicUsize::new(0));
        let local = ForkLocal::new(Counted(drops.clone()));
        assert!(!local.is_inherited());
        drop(local);
        assert_eq!(drops.load(Ordering::SeqCst), 1);
    }

    #[test]
    fn a_value_inherited_through_fork_is_never_dropped() {
        let drops = Arc::new(AtomicUsize::new(0));
        let mut local = ForkLocal::new(Counted(drops.clone()));
        // As if this process were a forked child of the one that made it.
        local.generation = generation().wrapping_add(1);
        assert!(local.is_inherited());
        drop(local);
        assert_eq!(drops.load(Ordering::SeqCst), 0);
    }
}
