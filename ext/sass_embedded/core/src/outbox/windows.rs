//! The outbox on Windows (see [`super`]): an anonymous pipe cannot be made
//! non-blocking, so callers only queue, and a writer thread (started with
//! the first packet) writes the queue in order with blocking writes. A
//! compiler that stops reading blocks that thread alone.
//!
//! How much of what was written a compiler never read is asked of the
//! pipe's read end (a write end cannot say it here), a copy of which the
//! outbox keeps until the input closes ([`crate::process::Input`]): so a
//! request written to a compiler that was already dying runs again on
//! another compiler, as on Linux.

use std::collections::VecDeque;
use std::fs::File;
use std::io::Write;
use std::sync::{Arc, Condvar, Mutex, MutexGuard, PoisonError};

use bytes::Bytes;

use super::OnFailure;
use crate::executor::Executor;
use crate::process::Input;

#[derive(Default)]
struct State {
    /// The compiler's stdin, until the writer thread takes it.
    stdin: Option<File>,
    queue: VecDeque<Bytes>,
    /// A copy of the pipe's read end, to ask how much is unread; dropped
    /// when the input closes, so that no reader is left: a write blocked on
    /// a compiler that died then fails instead of waiting for ever (under
    /// Wine, whose pipes take a large write whole, none blocks).
    unread: Option<File>,
    /// Bytes taken from callers so far.
    taken: u64,
    /// Bytes handed to the pipe so far (the packet being written included).
    handed: u64,
    /// How much the compiler had read when the input closed, if known.
    read_when_closed: Option<u64>,
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
                    if let Some(packet) = state.queue.pop_front() {
                        state.handed += packet.len() as u64;
                        break packet;
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
    pub(crate) fn new(stdin: Input, _executor: Arc<dyn Executor>, on_failure: OnFailure) -> Self {
        Self {
            shared: Arc::new(Shared {
                state: Mutex::new(State {
                    stdin: Some(stdin.pipe),
                    unread: Some(stdin.unread),
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
        if let Some(read_end) = state.unread.take() {
            state.read_when_closed = read_position(&state, &read_end);
            drop(read_end);
        }
        // Never written to: closed here.
        let unused = state.stdin.take();
        drop(state);
        drop(unused);
        self.shared.wake.notify_one();
    }

    /// How many bytes of what was written the compiler read, from the bytes
    /// still in the pipe: every packet that starts at or after it never
    /// reached the compiler. Of a packet being written, the bytes not yet
    /// in the pipe count as read: so the answer never says a request the
    /// compiler saw was unseen.
    pub(crate) fn read_position(&self) -> Option<u64> {
        let state = self.shared.lock();
        match &state.unread {
            Some(read_end) => read_position(&state, read_end),
            None => state.read_when_closed,
        }
    }
}

/// With `state` locked, the writer hands the pipe nothing new.
fn read_position(state: &State, read_end: &File) -> Option<u64> {
    let unread = crate::sys::pipe_unread(read_end).ok()?;
    Some(state.handed.saturating_sub(unread as u64))
}

impl Drop for Outbox {
    fn drop(&mut self) {
        // The writer finishes the queue and closes the pipe.
        self.close_input();
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::{Duration, Instant};

    use crate::executor::ExecutorKind;

    /// A compiler that died without reading: its read end is gone, and the
    /// outbox's copy keeps what was written countable, also once the input
    /// is closed. (Whether closing frees a writer blocked on a full pipe is
    /// not shown here: Wine's pipes take a 200 KB write whole.)
    #[test]
    fn what_a_dead_compiler_never_read_is_counted_before_and_after_the_input_closes() {
        let (read, write) = crate::sys::input_pipe().unwrap();
        let unread = read.try_clone().unwrap();
        drop(read);
        let outbox = Arc::new(Outbox::new(
            Input {
                pipe: write,
                unread,
            },
            ExecutorKind::Thread.start().unwrap(),
            Box::new(|error| panic!("writing failed: {error}")),
        ));
        assert_eq!(outbox.send(Bytes::from(vec![1; 100])), Ok(0));
        assert_eq!(outbox.send(Bytes::from(vec![2; 1000])), Ok(100));
        // Once the writer has put both in the pipe, all of it is unread.
        let deadline = Instant::now() + Duration::from_secs(10);
        while outbox.shared.lock().handed < 1100 || outbox.read_position() != Some(0) {
            assert!(
                Instant::now() < deadline,
                "read position {:?}",
                outbox.read_position()
            );
            std::thread::sleep(Duration::from_millis(5));
        }
        outbox.close_input();
        assert_eq!(outbox.read_position(), Some(0));
        assert_eq!(outbox.send(Bytes::from(vec![3; 10])), Err(()));
    }
}
