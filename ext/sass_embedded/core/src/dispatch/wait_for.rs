//! The wait_for dispatch mode, the baseline `rake bench` compares against: a
//! caller takes a process-wide *baton* for its whole compilation, writes its
//! request, and reads the compiler's output itself, running its callbacks
//! inline, so compilations run one at a time, the way a `waitFor`-style
//! compiler blocks its whole event loop on each host callback.
//!
//! The baton is reentrant per thread, so a compile nested in a callback runs
//! under its caller's baton. Waiting for the baton and for output is
//! interruptible: the caller's [`Waker`](crate::dispatcher::Waker) also wakes
//! the `poll` the reading thread blocks in. Packets of compilations whose
//! callers gave up are routed like any other, and answered by whoever reads.

use std::cell::Cell;
use std::fs::File;
use std::io::{ErrorKind, Read, Write};
use std::os::fd::OwnedFd;
use std::sync::{Arc, Mutex, MutexGuard, OnceLock, PoisonError};

use crossbeam_channel::{Receiver, Sender};
use mio::unix::pipe::Receiver as PipeReceiver;
use mio::{Events, Interest, Poll, Token};

use crate::connection::{PacketRouter, ReadEnd, EXIT_GRACE, STDERR_GRACE};
use crate::dispatcher::{Dispatcher, Event};
use crate::process::CompilerProcess;

const STDOUT: Token = Token(0);
const WAKE: Token = Token(1);

fn lock<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(PoisonError::into_inner)
}

/// The process-wide baton: a channel holding one token while nobody has it.
fn baton() -> &'static (Sender<()>, Receiver<()>) {
    static BATON: OnceLock<(Sender<()>, Receiver<()>)> = OnceLock::new();
    BATON.get_or_init(|| {
        let (sender, receiver) = crossbeam_channel::bounded(1);
        sender.send(()).expect("the channel has room for the token");
        (sender, receiver)
    })
}

thread_local! {
    /// How many compilations of this thread hold the baton (nesting).
    static BATON_DEPTH: Cell<usize> = const { Cell::new(0) };
}

/// Holding the baton; dropping it gives the baton back when the outermost
/// holder on this thread is done.
#[derive(Debug)]
pub(crate) struct Baton(());

impl Drop for Baton {
    fn drop(&mut self) {
        let depth = BATON_DEPTH.with(|depth| {
            depth.set(depth.get() - 1);
            depth.get()
        });
        if depth == 0 {
            let _ = baton().0.send(());
        }
    }
}

/// The outcome of waiting for the baton.
pub(crate) enum Acquired {
    /// The baton is held.
    Baton(Baton),
    /// Something arrived in the caller's channel first (a wake, a failure).
    Event(Box<Event>),
}

/// Takes the baton, unless this thread holds it already; gives up when an
/// event arrives in `inbox` first.
pub(crate) fn acquire(inbox: &Receiver<Event>) -> Acquired {
    if BATON_DEPTH.with(Cell::get) > 0 {
        BATON_DEPTH.with(|depth| depth.set(depth.get() + 1));
        return Acquired::Baton(Baton(()));
    }
    crossbeam_channel::select! {
        recv(baton().1) -> _ => {
            BATON_DEPTH.with(|depth| depth.set(1));
            Acquired::Baton(Baton(()))
        }
        recv(inbox) -> event => Acquired::Event(Box::new(event.unwrap_or(Event::Wake))),
    }
}

/// The reading side: the poll, the pipe and what was read so far.
#[derive(Debug)]
struct Reader {
    poll: Poll,
    events: Events,
    stdout: PipeReceiver,
    router: PacketRouter,
    ended: bool,
}

/// The pipes of a wait_for connection, used by whichever caller holds the
/// baton.
#[derive(Debug)]
pub(crate) struct Inline {
    stdin: Mutex<Option<File>>,
    reader: Mutex<Reader>,
    poll_waker: Arc<mio::Waker>,
    dispatcher: Arc<Dispatcher>,
    process: Arc<CompilerProcess>,
}

impl Inline {
    pub(crate) fn new(
        stdin: OwnedFd,
        stdout: OwnedFd,
        dispatcher: Arc<Dispatcher>,
        process: Arc<CompilerProcess>,
    ) -> std::io::Result<Self> {
        let poll = Poll::new()?;
        let mut stdout = PipeReceiver::from(stdout);
        stdout.set_nonblocking(true)?;
        poll.registry()
            .register(&mut stdout, STDOUT, Interest::READABLE)?;
        let poll_waker = Arc::new(mio::Waker::new(poll.registry(), WAKE)?);
        Ok(Self {
            stdin: Mutex::new(Some(File::from(stdin))),
            reader: Mutex::new(Reader {
                poll,
                events: Events::with_capacity(4),
                stdout,
                router: PacketRouter::default(),
                ended: false,
            }),
            poll_waker,
            dispatcher,
            process,
        })
    }

    /// Wakes a caller blocked in [`pump`](Self::pump).
    pub(crate) fn poll_waker(&self) -> Arc<mio::Waker> {
        self.poll_waker.clone()
    }

    /// Writes one whole packet (blocking).
    pub(crate) fn send(&self, packet: &[u8]) -> Result<(), ()> {
        match &mut *lock(&self.stdin) {
            Some(stdin) => stdin.write_all(packet).map_err(|_| ()),
            None => Err(()),
        }
    }

    /// Closes the compiler's stdin, which asks it to exit.
    pub(crate) fn close_input(&self) {
        lock(&self.stdin).take();
    }

    /// Waits until the compiler writes something (or the waker fires), then
    /// reads and routes all of it. At the end of the output, fails the
    /// callers as the end requires. Returns whether the output has ended.
    pub(crate) fn pump(&self) -> bool {
        let mut reader = lock(&self.reader);
        let reader = &mut *reader;
        if reader.ended {
            return true;
        }
        match reader.poll.poll(&mut reader.events, None) {
            Ok(()) => {}
            Err(error) if error.kind() == ErrorKind::Interrupted => return false,
            Err(error) => {
                reader.ended = true;
                self.finish(ReadEnd::Protocol(format!(
                    "polling the compiler failed: {error}"
                )));
                return true;
            }
        }
        let mut chunk = [0u8; 64 * 1024];
        let end = loop {
            match reader.stdout.read(&mut chunk) {
                Ok(0) => break Some(reader.router.end_of_output()),
                Ok(n) => reader.router.buffer().extend_from_slice(&chunk[..n]),
                Err(error) if error.kind() == ErrorKind::WouldBlock => break None,
                Err(error) if error.kind() == ErrorKind::Interrupted => {}
                Err(error) => {
                    break Some(ReadEnd::Protocol(format!(
                        "reading from the compiler failed: {error}"
                    )))
                }
            }
        };
        let routed = reader.router.route(&self.dispatcher, |reply| {
            let _ = self.send(&reply);
        });
        if let Some(end) = routed.err().or(end) {
            reader.ended = true;
            self.finish(end);
        }
        reader.ended
    }

    fn finish(&self, end: ReadEnd) {
        if end.kills() {
            self.process.kill();
        }
        let ending = self.process.ending_blocking(EXIT_GRACE);
        self.process.stderr_settled_blocking(STDERR_GRACE);
        if let Some(error) = end.error(&self.dispatcher, &self.process, ending) {
            self.dispatcher.fail(error);
        }
        self.close_input();
    }
}
