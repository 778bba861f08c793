//! The outbox on Windows (see [`super`]): an anonymous pipe cannot be made
//! non-blocking, so callers only queue, and a writer thread (started with
//! the first packet) writes the queue in order with blocking writes. A
//! compiler that stops reading blocks that thread alone.
//!
//! How much of what was written a compiler never read cannot be asked of
//! an anonymous pipe here: [`Outbox::read_position`] says `None`, as on
//! Unixes without `FIONREAD` on a pipe's write end.

use std::collections::VecDeque;
use std::fs::File;
use std::io::Write;
use std::sync::{Arc, Condvar, Mutex, MutexGuard, PoisonError};

use bytes::Bytes;

use super::OnFailure;
use crate::executor::Executor;

#[derive(Default)]
struct State {
    /// The compiler's stdin, until the writer thread takes it.
    stdin: Option<File>,
    queue: VecDeque<Bytes>,
    /// Bytes taken from callers so far.
    taken: u64,
    /// The writer thread runs.
    writing: bool,
    closing: bool,
    failed: bool,
}

/// What the outbox and its writer thread share.
struct Shared {
    state: Mutex<State>,
    /// Wakes the writer: a packet, or closing.
    wake: Condvar,
    on_failure: OnFailure,
}

impl Shared {
    fn lock(&self) -> MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// The writer thread: writes each queued packet whole, in order, until
    /// the input is closed and the queue is empty, or a write fails. The
    /// pipe is closed (the compiler then sees its input end) when it ends.
    fn write(&self, mut stdin: File) {
        loop {
            let packet = {
                let mut state = self.lock();
                loop {
                    if state.failed {
                        return;
                    }
                    if let Some(packet) = state.queue.front() {
                        break packet.clone();
                    }
                    if state.closing {
                        return;
                    }
                    state = self
                        .wake
                        .wait(state)
                        .unwrap_or_else(PoisonError::into_inner);
                }
            };
            if let Err(error) = stdin.write_all(&packet) {
                let mut state = self.lock();
                state.failed = true;
                state.queue.clear();
                drop(state);
                (self.on_failure)(error);
                return;
            }
            self.lock().queue.pop_front();
        }
    }
}

/// The compiler's input, written by a thread of its own.
pub(crate) struct Outbox {
    shared: Arc<Shared>,
}

impl std::fmt::Debug for Outbox {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Outbox").finish_non_exhaustive()
    }
}

impl Outbox {
    /// An outbox writing to `stdin`, calling `on_failure` (from the writer
    /// thread) when writing fails. (The executor is Unix's flusher.)
    pub(crate) fn new(stdin: File, _executor: Arc<dyn Executor>, on_failure: OnFailure) -> Self {
        Self {
            shared: Arc::new(Shared {
                state: Mutex::new(State {
                    stdin: Some(stdin),
                    ..State::default()
                }),
                wake: Condvar::new(),
                on_failure,
            }),
        }
    }

    /// Queues `packet` for the writer; where in the compiler's input it
    /// starts. Never blocks. `Err` once the input is closed or failed.
    pub(crate) fn send(self: &Arc<Self>, packet: Bytes) -> Result<u64, ()> {
        let mut state = self.shared.lock();
        if state.failed || state.closing {
            return Err(());
        }
        let offset = state.taken;
        state.taken += packet.len() as u64;
        state.queue.push_back(packet);
        if !state.writing {
            let Some(stdin) = state.stdin.take() else {
                return Err(());
            };
            state.writing = true;
            drop(state);
            let shared = self.shared.clone();
            let started = std::thread::Builder::new()
                .name("sass-writer".into())
                .spawn(move || shared.write(stdin));
            if let Err(error) = started {
                let mut state = self.shared.lock();
                state.failed = true;
                state.queue.clear();
                drop(state);
                (self.shared.on_failure)(error);
                return Err(());
            }
            return Ok(offset);
        }
        drop(state);
        self.shared.wake.notify_one();
        Ok(offset)
    }

    /// Takes no more packets; the pipe closes once the queue is written.
    pub(crate) fn close_input(&self) {
        let mut state = self.shared.lock();
        state.closing = true;
        // Never written to: closed here.
        let unused = state.stdin.take();
        drop(state);
        drop(unused);
        self.shared.wake.notify_one();
    }

    /// Unknown here (see the module docs).
    pub(crate) fn read_position(&self) -> Option<u64> {
        None
    }
}

impl Drop for Outbox {
    fn drop(&mut self) {
        // The writer finishes the queue and closes the pipe.
        self.close_input();
    }
}
