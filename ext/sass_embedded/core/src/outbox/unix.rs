//! The outbox on Unix (see [`super`]): non-blocking writes from the caller,
//! and a task on the executor that writes the rest when the pipe drains.

use std::collections::VecDeque;
use std::fs::File;
use std::io::{self, ErrorKind, Write};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};

use bytes::Bytes;

use crate::executor::{self, Executor, Interest, Task};
use crate::fork::ForkLocal;

/// What the outbox reports when writing fails (the compiler closed its
/// input: it exited or is exiting).
use super::OnFailure;

#[derive(Debug, Default)]
struct State {
    /// The compiler's stdin; `None` once closed.
    stdin: Option<ForkLocal<File>>,
    /// Packets (or what is left of the first one) waiting for room.
    queue: VecDeque<Bytes>,
    /// How much of the first queued packet is written.
    written: usize,
    /// Bytes taken so far: where the next packet starts.
    taken: u64,
    /// Bytes written to the pipe so far.
    written_total: u64,
    /// How much the compiler had read when stdin was closed, if known.
    read_when_closed: Option<u64>,
    /// A task is writing the queue.
    flushing: bool,
    /// Close stdin once the queue is written.
    closing: bool,
    /// Writing failed; nothing more is written.
    failed: bool,
}

/// The writing side of one compiler.
pub(crate) struct Outbox {
    state: Mutex<State>,
    executor: Arc<dyn Executor>,
    on_failure: OnFailure,
}

impl std::fmt::Debug for Outbox {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Outbox").finish_non_exhaustive()
    }
}

impl Outbox {
    /// An outbox writing to `stdin`, which must be non-blocking.
    pub(crate) fn new(stdin: File, executor: Arc<dyn Executor>, on_failure: OnFailure) -> Self {
        Self {
            state: Mutex::new(State {
                stdin: Some(ForkLocal::new(stdin)),
                ..State::default()
            }),
            executor,
            on_failure,
        }
    }

    fn lock(&self) -> MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Writes `packet` (or queues what does not fit); where in the
    /// compiler's input it starts. Fails if the compiler's input is closed or
    /// writing failed.
    pub(crate) fn send(self: &Arc<Self>, packet: Bytes) -> Result<u64, ()> {
        let mut state = self.lock();
        if state.failed || state.closing || state.stdin.is_none() {
            return Err(());
        }
        let offset = state.taken;
        state.taken += packet.len() as u64;
        if !state.queue.is_empty() {
            state.queue.push_back(packet);
            return Ok(offset);
        }
        state.queue.push_back(packet);
        match write_queue(&mut state) {
            Ok(true) => Ok(offset),
            Ok(false) => {
                let flush = self.start_flushing(&mut state);
                // Spawned with the lock released: an executor that has
                // stopped drops the task at once, and with it its watch.
                drop(state);
                if let Some(flush) = flush {
                    self.executor.spawn(flush);
                }
                Ok(offset)
            }
            Err(error) => {
                self.failed(&mut state, error);
                Err(())
            }
        }
    }

    /// Closes the compiler's stdin once everything queued is written, which
    /// asks the compiler to exit.
    pub(crate) fn close_input(&self) {
        let mut state = self.lock();
        state.closing = true;
        if !state.flushing {
            state.queue.clear();
            close_stdin(&mut state);
        }
    }

    /// How many bytes of what was written the compiler read, if this can be
    /// known (on Linux, from the bytes still in the pipe): every packet that
    /// starts at or after it never reached the compiler.
    pub(crate) fn read_position(&self) -> Option<u64> {
        read_position(&self.lock())
    }

    fn failed(&self, state: &mut State, error: io::Error) {
        state.failed = true;
        state.queue.clear();
        close_stdin(state);
        (self.on_failure)(error);
    }

    /// The task that writes the queue as the pipe drains, to be spawned
    /// once `state` is unlocked; `None` if one is writing already (or
    /// nothing can be written).
    fn start_flushing(self: &Arc<Self>, state: &mut State) -> Option<Task> {
        if state.flushing {
            return None;
        }
        let stdin = state.stdin.as_ref()?;
        let watch = match crate::sys::waitable(stdin)
            .and_then(|stdin| self.executor.watch(stdin, Interest::Write))
        {
            Ok(watch) => watch,
            Err(error) => {
                self.failed(state, error);
                return None;
            }
        };
        state.flushing = true;
        let outbox = self.clone();
        Some(Box::pin(async move {
            loop {
                if executor::ready(&*watch).await.is_err() {
                    // Writing will tell what is wrong.
                }
                let mut state = outbox.lock();
                match write_queue(&mut state) {
                    Ok(false) => continue,
                    Ok(true) => {
                        state.flushing = false;
                        // The watch goes before the descriptor it watches.
                        drop(watch);
                        if state.closing {
                            close_stdin(&mut state);
                        }
                        return;
                    }
                    Err(error) => {
                        state.flushing = false;
                        drop(watch);
                        return outbox.failed(&mut state, error);
                    }
                }
            }
        }))
    }
}

fn read_position(state: &State) -> Option<u64> {
    match &state.stdin {
        Some(stdin) => {
            let unread = crate::sys::pipe_unread(stdin).ok()?;
            Some(state.written_total.saturating_sub(unread as u64))
        }
        None => state.read_when_closed,
    }
}

/// Closes the compiler's stdin, noting first how much of it was read.
fn close_stdin(state: &mut State) {
    if state.stdin.is_some() {
        state.read_when_closed = read_position(state);
        state.stdin = None;
    }
}

/// Writes queued packets until the queue is empty (`true`) or the pipe is
/// full (`false`).
fn write_queue(state: &mut State) -> io::Result<bool> {
    let State {
        stdin,
        queue,
        written,
        written_total,
        ..
    } = state;
    let Some(mut stdin) = stdin.as_deref() else {
        return Err(io::Error::new(
            ErrorKind::BrokenPipe,
            "the compiler's input is closed",
        ));
    };
    while let Some(packet) = queue.front() {
        match stdin.write(&packet[*written..]) {
            Ok(0) => return Err(ErrorKind::WriteZero.into()),
            Ok(n) => {
                *written += n;
                *written_total += n as u64;
                if *written == packet.len() {
                    queue.pop_front();
                    *written = 0;
                }
            }
            Err(error) if error.kind() == ErrorKind::WouldBlock => return Ok(false),
            Err(error) if error.kind() == ErrorKind::Interrupted => {}
            Err(error) => return Err(error),
        }
    }
    Ok(true)
}
