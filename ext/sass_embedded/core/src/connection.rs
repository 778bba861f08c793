//! One running compiler: its process, its routing table, its pipes, and the
//! rules by which callers read from it.
//!
//! Callers read the compiler's output themselves: a caller waiting for its
//! next message first reads whatever the compiler has written (if nobody
//! else is reading at that moment) and routes every packet to its
//! compilation, then sleeps as the [`Dispatcher`] tells it: on the
//! connection's *selector* (the watcher: readable when the compiler writes,
//! see [`crate::wait`]) or parked. A caller writes its packets straight to the
//! compiler's stdin through the [`Outbox`]. With one compile in flight, the
//! calling thread therefore writes its request, sleeps on the compiler's
//! output, wakes when the answer is there and reads it: no other thread
//! takes part.
//!
//! Under the reader-thread mechanism (see [`crate::wait`]) no caller reads:
//! a thread of the connection reads the output with blocking reads and
//! routes it, and the watcher sleeps on the kick alone.
//!
//! What no caller waits for runs on the host's [`Executor`]: the tail of the
//! compiler's stderr (whose end also tells that the compiler died, even
//! while idle), the startup and idle timers, finishing a compiler whose
//! output ended, and reading for compilations whose callers went away (the
//! *background reader*, armed only while such compilations, or a dead
//! compiler, need it).
//!
//! However it ends, the end of the compiler's output becomes one
//! [`Failure`] by one set of rules: when the compiler exits, breaks the
//! protocol, or reports a protocol error, every compilation in flight fails
//! with an error that says what happened (a compiler error that names a
//! compilation fails that one as its own and the others as bystanders, which
//! the host runs again), and the compiler is killed if it is still running.

use std::fs::File;
use std::io::{ErrorKind, Read};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError, Weak};
use std::time::{Duration, Instant};

use bytes::{Bytes, BytesMut};
use crossbeam_channel::Receiver;

use crate::dispatcher::{
    Dispatcher, Event, Failure, Key, RegisterError, Registration, Role, Routing,
};
use crate::error::HostError;
use crate::executor::{self, Executor, Interest, Signal};
use crate::fork::ForkLocal;
use crate::framing::{encode_packet, PacketDecoder};
use crate::outbox::Outbox;
use crate::process::{self, CompilerCommand, CompilerProcess, Ending, StderrTail};
use crate::protocol::{inbound_message, InboundMessage, OutboundMessage, ERROR_ID};
use crate::wait::{self, spin, Kick, Selector, Wait, Waker};

/// How long the compiler gets to exit on its own after its output ended,
/// before it is killed.
pub(crate) const EXIT_GRACE: Duration = Duration::from_secs(2);
/// How long to wait for the compiler's last words on stderr after it ended.
pub(crate) const STDERR_GRACE: Duration = Duration::from_millis(500);
/// How long the deputy (one parked caller, see [`crate::dispatcher`])
/// sleeps before it looks at the compiler's output itself, in case the
/// watcher is slow to read (a fiber whose scheduler is busy elsewhere).
pub const PARK_PATIENCE: Duration = Duration::from_millis(100);
/// How long the watcher sleeps before it looks again even if nothing woke
/// it. Every message for it wakes it, by the compiler's output or the kick;
/// this is a safety net that bounds the cost of a wake-up lost anyway to a
/// delay instead of a hang.
pub const WATCH_PATIENCE: Duration = Duration::from_secs(1);

/// How long waiting callers sleep before they look again although nothing
/// woke them. `None` sleeps until woken: tests use it so that a lost wake-up
/// is a hang they report instead of a delay nobody notices.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Patience {
    /// The watcher, on the selector.
    pub watch: Option<Duration>,
    /// The deputy, parked (every other parked caller sleeps until woken).
    pub park: Option<Duration>,
}

impl Default for Patience {
    fn default() -> Self {
        Self {
            watch: Some(WATCH_PATIENCE),
            park: Some(PARK_PATIENCE),
        }
    }
}

/// How a connection treats its compiler over time.
#[derive(Clone, Copy, Debug)]
pub struct Timeouts {
    /// Close the compiler after this long with nothing in flight.
    pub idle: Option<Duration>,
    /// Fail the compiler if it has not answered the version handshake this
    /// long after it started (a wrong program, or one that hangs).
    pub startup: Duration,
    /// How long waiting callers sleep unwoken.
    pub patience: Patience,
}

/// A caller's next step.
#[derive(Debug)]
pub(crate) enum Next {
    /// Its next event.
    Event(Event),
    /// Nothing yet: wait so, then ask again (and silence what it slept on
    /// first).
    Wait(Wait, Slept),
}

/// What a caller slept on, to silence before it looks again.
#[derive(Debug, Default)]
pub(crate) enum Slept {
    /// Nothing to silence.
    #[default]
    Nothing,
    /// The connection's selector, as the watcher: the kick, if it was rung.
    Selector,
}

/// The reading side: only the caller holding it reads.
struct Reader {
    stdout: ForkLocal<File>,
    router: PacketRouter,
    scratch: Vec<u8>,
    ended: bool,
}

/// One running compiler and its routing table.
pub struct Connection {
    dispatcher: Arc<Dispatcher>,
    process: Arc<CompilerProcess>,
    outbox: Arc<Outbox>,
    reader: Mutex<Reader>,
    /// What the watcher sleeps on: the compiler's stdout and the kick.
    selector: Selector,
    kick: Arc<Kick>,
    executor: Arc<dyn Executor>,
    /// Wakes the background reader.
    background: Arc<Signal>,
    /// Writing failed: the compiler stopped reading.
    write_failed: Arc<AtomicBool>,
    /// A thread of this connection reads the output: callers never do.
    reader_thread: bool,
    /// The compiler's stderr ended: it exited (or is exiting).
    stderr_ended: AtomicBool,
    patience: Patience,
    /// Called once the compiler has ended and the connection is of no more
    /// use (its owner then lets it go, and with it its descriptors).
    on_end: Box<dyn Fn() + Send + Sync>,
}

impl std::fmt::Debug for Connection {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Connection")
            .field("pid", &self.process.pid())
            .field("dispatcher", &self.dispatcher)
            .finish_non_exhaustive()
    }
}

impl Connection {
    /// Starts a compiler (from the executor's thread), its watchers and its
    /// pipes, and sends the version handshake. Compilations may be started at
    /// once: they are written after the handshake and routed only if it
    /// succeeds. `on_end` is called (on the executor's thread) once the
    /// compiler has ended, closed or failed, and been reaped.
    pub fn start(
        command: &CompilerCommand,
        executor: &Arc<dyn Executor>,
        timeouts: Timeouts,
        on_end: Box<dyn Fn() + Send + Sync>,
    ) -> Result<Arc<Self>, HostError> {
        let spawned = {
            let command = command.clone();
            executor::run_on(&**executor, move || process::spawn(&command))
                .unwrap_or(Err(HostError::Closed))?
        };
        let command_line = command.to_string();
        let tail = StderrTail::shared();
        let process = Arc::new(CompilerProcess::new(
            spawned.child,
            command_line.clone(),
            tail.clone(),
        ));
        // Making the compiler's descriptors is part of starting it.
        let io_error = |error: std::io::Error| {
            process.kill();
            let _ = process.ending_blocking(Duration::ZERO);
            HostError::Spawn {
                command: command_line.clone(),
                errno: error.raw_os_error(),
                message: error.to_string(),
            }
        };

        let stdout = ForkLocal::new(spawned.stdout);
        let thread_output = wait::thread_output(&stdout).map_err(io_error)?;
        let kick = Arc::new(Kick::new().map_err(io_error)?);
        let selector = Selector::new(&stdout, &kick).map_err(io_error)?;

        let handshake_id = 0;
        let dispatcher = Arc::new(Dispatcher::new(handshake_id, kick.clone()));
        let background = Arc::new(Signal::default());
        let write_failed = Arc::new(AtomicBool::new(false));
        let outbox = {
            let (background, write_failed, dispatcher, process, executor2) = (
                background.clone(),
                write_failed.clone(),
                dispatcher.clone(),
                process.clone(),
                executor.clone(),
            );
            Arc::new(Outbox::new(
                spawned.stdin,
                executor.clone(),
                Box::new(move |error| {
                    // The compiler stopped reading: usually it is exiting, and
                    // the end of its output will say how. Take no new work, make
                    // sure that end is read even if nobody waits, and if it
                    // keeps running, do not leave callers waiting on it.
                    write_failed.store(true, Ordering::Release);
                    background.notify();
                    let (dispatcher, process, executor) =
                        (dispatcher.clone(), process.clone(), executor2.clone());
                    executor2.spawn(Box::pin(async move {
                        executor.sleep(EXIT_GRACE).await;
                        if dispatcher.failure().is_none() && process.try_ending().is_none() {
                            dispatcher.fail(HostError::Io {
                                command: process.command().to_owned(),
                                message: format!("writing to the compiler failed: {error}"),
                            });
                            process.kill();
                        }
                    }));
                }),
            ))
        };
        let connection = Arc::new(Self {
            dispatcher: dispatcher.clone(),
            process: process.clone(),
            outbox,
            reader: Mutex::new(Reader {
                stdout,
                router: PacketRouter::default(),
                scratch: vec![0; 64 * 1024],
                ended: false,
            }),
            selector,
            kick,
            executor: executor.clone(),
            background,
            write_failed,
            reader_thread: thread_output.is_some(),
            stderr_ended: AtomicBool::new(false),
            patience: timeouts.patience,
            on_end,
        });

        let handshake = InboundMessage {
            message: Some(inbound_message::Message::VersionRequest(
                inbound_message::VersionRequest { id: handshake_id },
            )),
        };
        // A compiler that exits at once refuses this; the end of its output
        // then tells its first compilation how it ended.
        let _ = connection.send(Bytes::from(encode_packet(
            crate::protocol::VERSION_COMPILATION_ID,
            &handshake,
        )));

        executor.spawn(Box::pin(stderr_task(
            Arc::downgrade(&connection),
            spawned.stderr,
            tail,
        )));
        match thread_output {
            Some(output) => {
                let weak = Arc::downgrade(&connection);
                std::thread::Builder::new()
                    .name(wait::READER_THREAD_NAME.into())
                    .spawn(move || read_on_thread(weak, output))
                    .map_err(|error| {
                        connection.kill();
                        io_error(error)
                    })?;
            }
            None => executor.spawn(Box::pin(background_reader(Arc::downgrade(&connection)))),
        }
        if let Some(timeout) = timeouts.idle {
            executor.spawn(Box::pin(idle_watch(Arc::downgrade(&connection), timeout)));
        }
        executor.spawn(Box::pin(startup_watch(
            Arc::downgrade(&connection),
            timeouts.startup,
        )));
        Ok(connection)
    }

    /// The routing table.
    pub fn dispatcher(&self) -> &Arc<Dispatcher> {
        &self.dispatcher
    }

    /// The compiler's process id.
    pub fn pid(&self) -> u32 {
        self.process.pid()
    }

    /// Whether new compilations may start here: not closing, not failed, and
    /// still taking input.
    pub fn is_open(&self) -> bool {
        !self.dispatcher.is_closed() && !self.write_failed.load(Ordering::Acquire)
    }

    /// Whether the compiler process has ended (and was reaped).
    pub fn has_exited(&self) -> bool {
        self.process.try_ending().is_some()
    }

    /// How many compilations hold one of this compiler's slots.
    pub fn load(&self) -> usize {
        self.dispatcher.compilations_in_flight()
    }

    /// Registers a compilation whose caller `waker` wakes.
    pub fn register_compilation(&self, waker: Waker) -> Result<Registration, RegisterError> {
        self.dispatcher.register_compilation(waker)
    }

    /// Registers a version request whose caller `waker` wakes.
    pub fn register_version(&self, waker: Waker) -> Result<Registration, RegisterError> {
        self.dispatcher.register_version(waker)
    }

    /// Sends one encoded packet: written at once, or queued behind what a
    /// full pipe could not take yet; where in the compiler's input it starts.
    /// Never blocks.
    pub fn send(&self, packet: Bytes) -> Result<u64, HostError> {
        self.outbox.send(packet).map_err(|()| self.gone())
    }

    /// The error to report when the compiler can no longer be written to.
    pub(crate) fn gone(&self) -> HostError {
        self.dispatcher.failure().unwrap_or(HostError::Closed)
    }

    /// A caller's next event, or where to wait for it. Reads the compiler's
    /// output first if nobody else is reading, unless `fresh` (the caller
    /// just sent its request: nothing can be there for it yet, and whatever
    /// is there for others wakes the watch at once). With `settle`, the
    /// caller's spin just caught the output, and a packet it finds half
    /// written is read to its end for up to that long (see
    /// [`spin::settle`]).
    pub(crate) fn next(
        self: &Arc<Self>,
        key: Key,
        token: u64,
        inbox: &Receiver<Event>,
        slept: Slept,
        fresh: bool,
        settle: Option<Duration>,
    ) -> Next {
        if let Slept::Selector = slept {
            self.kick.silence();
        }
        let mut read = !fresh && !self.reader_thread;
        loop {
            if let Ok(event) = inbox.try_recv() {
                self.dispatcher.done_waiting(key, token);
                return Next::Event(event);
            }
            if read {
                self.try_read(Some(token), settle);
                if let Ok(event) = inbox.try_recv() {
                    self.dispatcher.done_waiting(key, token);
                    return Next::Event(event);
                }
            }
            read = !self.reader_thread;
            match self.dispatcher.wait_on(key, token) {
                Role::Ready => continue,
                Role::Watch { output_ended } => {
                    // Once the output ended, it stays readable: only the kick
                    // can say anything more, and nothing is a moment away.
                    let wait = if output_ended {
                        Wait::Fds(self.kick.fds(), self.patience.watch)
                    } else if let Some(budget) = spin::budget() {
                        Wait::Spin(self.selector.fds(), budget, self.patience.watch)
                    } else {
                        Wait::Fds(self.selector.fds(), self.patience.watch)
                    };
                    return Next::Wait(wait, Slept::Selector);
                }
                Role::Park { deputy } => {
                    let timeout = if deputy { self.patience.park } else { None };
                    return Next::Wait(Wait::Park(timeout), Slept::Nothing);
                }
            }
        }
    }

    /// Reads and routes whatever the compiler has written, unless someone
    /// else is reading right now or the output ended. `reader` is the
    /// reading caller's token, if a caller reads; `settle`, how long it may
    /// wait for the rest of a half-written packet.
    fn try_read(self: &Arc<Self>, reader: Option<u64>, settle: Option<Duration>) {
        let guard = match self.reader.try_lock() {
            Ok(guard) => guard,
            Err(std::sync::TryLockError::Poisoned(poisoned)) => poisoned.into_inner(),
            Err(std::sync::TryLockError::WouldBlock) => return,
        };
        self.read_with(guard, reader, settle);
    }

    /// Reads and routes with the reader lock held.
    fn read_with(
        self: &Arc<Self>,
        mut guard: MutexGuard<'_, Reader>,
        reader: Option<u64>,
        settle: Option<Duration>,
    ) {
        if guard.ended {
            return;
        }
        if let Some(end) = self.read_and_route(&mut guard, reader, settle) {
            self.end_reading(guard, end);
        }
    }

    /// The output ended so: nobody reads any more, and the compiler is
    /// finished on the executor.
    fn end_reading(self: &Arc<Self>, mut guard: MutexGuard<'_, Reader>, end: ReadEnd) {
        guard.ended = true;
        drop(guard);
        self.dispatcher.set_reading_ended();
        self.executor.spawn(Box::pin(finish(self.clone(), end)));
    }

    /// Routes what `router` holds; the end, if the compiler broke the
    /// protocol.
    fn route_read(&self, router: &mut PacketRouter, reading: Option<u64>) -> Result<(), ReadEnd> {
        router.route(&self.dispatcher, reading, |reply| {
            let _ = self.outbox.send(Bytes::from(reply));
        })
    }

    fn read_and_route(
        &self,
        reader: &mut Reader,
        reading: Option<u64>,
        settle: Option<Duration>,
    ) -> Option<ReadEnd> {
        // Until when a half-written packet is read on, once one is seen.
        let mut settle_until = None;
        loop {
            let Reader {
                stdout,
                router,
                scratch,
                ..
            } = reader;
            let read = match (&**stdout).read(scratch) {
                Ok(0) => return Some(router.end_of_output()),
                Ok(n) => {
                    router.extend(&scratch[..n]);
                    n
                }
                Err(error) if error.kind() == ErrorKind::WouldBlock => {
                    if let (Some(settle), true) = (settle, router.mid_packet()) {
                        let until = *settle_until.get_or_insert_with(|| Instant::now() + settle);
                        if Instant::now() < until {
                            std::hint::spin_loop();
                            continue;
                        }
                    }
                    return None;
                }
                Err(error) if error.kind() == ErrorKind::Interrupted => continue,
                Err(error) => {
                    return Some(ReadEnd::Protocol(format!(
                        "reading from the compiler failed: {error}"
                    )))
                }
            };
            if let Err(end) = self.route_read(router, reading) {
                return Some(end);
            }
            // A short read emptied the pipe: what comes later wakes the watch
            // (the selector reports real readiness), so asking again now
            // would only hear WouldBlock; unless a packet is half written
            // and the caller settles it (the rest is a write away).
            if read < scratch.len() && !(settle.is_some() && router.mid_packet()) {
                return None;
            }
        }
    }

    /// Makes sure the compiler's output is read even if no caller waits: for
    /// detached compilations, or a compiler that stopped.
    pub(crate) fn arm_background_reader(&self) {
        self.background.notify();
    }

    fn needs_background_reader(&self) -> bool {
        !self.lock_reader().ended
            && (self.dispatcher.has_detached()
                || self.write_failed.load(Ordering::Acquire)
                || self.stderr_ended.load(Ordering::Acquire))
    }

    fn lock_reader(&self) -> MutexGuard<'_, Reader> {
        self.reader.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Fails what is in flight with `error` and asks the compiler to exit
    /// (closes its stdin), without waiting.
    pub fn fail_and_close(&self, error: HostError) {
        self.dispatcher.fail(error);
        self.outbox.close_input();
    }

    /// Closes the compiler: fails what is in flight with `error` and closes
    /// its stdin; a compiler that was busy is killed at once (nobody wants
    /// its work any more), an idle one gets `grace` to exit on its own. Waits
    /// (blocking) until it is reaped.
    pub fn close(&self, error: HostError, grace: Duration) {
        let busy = self.dispatcher.in_flight() > 0;
        self.fail_and_close(error);
        if busy {
            self.process.kill();
        }
        let _ = self.process.ending_blocking(grace);
    }

    /// Fails what is in flight with "closed compiler" and kills the
    /// compiler, without waiting for it: for the end of the process.
    pub fn kill(&self) {
        self.fail_and_close(HostError::Closed);
        self.process.kill();
    }

    /// Closes the compiler without waiting: a detached thread reaps it, so no
    /// zombie is left and the caller (a finalizer, say) never blocks.
    pub fn close_detached(&self) {
        let busy = self.dispatcher.in_flight() > 0;
        self.fail_and_close(HostError::Closed);
        if busy {
            self.process.kill();
        }
        let process = self.process.clone();
        let spawned = std::thread::Builder::new()
            .name("sass-embedded-reaper".into())
            .spawn(move || process.ending_blocking(EXIT_GRACE));
        if spawned.is_err() {
            // No thread to wait with: make sure the compiler at least ends.
            self.process.kill();
        }
    }
}

impl Drop for Connection {
    fn drop(&mut self) {
        // The background reader waits for this signal holding only a weak
        // reference: woken, it finds the connection gone and ends.
        self.background.notify();
    }
}

/// Why reading the compiler's output stopped.
#[derive(Debug)]
pub(crate) enum ReadEnd {
    /// The compiler closed its stdout between packets.
    Eof,
    /// The compiler closed its stdout inside a packet, after this many bytes
    /// of it.
    Truncated(usize),
    /// The compiler broke the protocol: it must be stopped, and every caller
    /// told this.
    Protocol(String),
    /// The compiler reported a protocol error of its own (and exits).
    CompilerError {
        id: u32,
        kind: String,
        message: String,
    },
    /// The compiler speaks another protocol version.
    Incompatible(String, String),
}

impl ReadEnd {
    /// Whether the compiler must be killed before its ending is awaited.
    pub(crate) fn kills(&self) -> bool {
        matches!(
            self,
            Self::Protocol(_) | Self::Incompatible(..) | Self::CompilerError { .. }
        )
    }

    /// How the callers fail, or `None` for an orderly close (the compiler's
    /// output ended after its input was closed with nothing in flight).
    pub(crate) fn failure(
        self,
        dispatcher: &Dispatcher,
        process: &CompilerProcess,
        (status, signaled): Ending,
        unread_from: Option<u64>,
    ) -> Option<Failure> {
        let command = process.command().to_owned();
        let stderr = process.stderr_tail();
        Some(Failure::All(match self {
            Self::Eof if dispatcher.is_closed() && dispatcher.in_flight() == 0 => return None,
            Self::Eof => HostError::Exited {
                command,
                status,
                stderr,
                unread_from,
            },
            // A compiler killed while writing says more by its signal than by
            // the half packet it left. Where an ending cannot show a kill
            // (Windows), a half packet is taken for one: a compiler never
            // stops mid-packet on its own.
            Self::Truncated(_) if signaled || !process::ENDING_SHOWS_A_KILL => HostError::Exited {
                command,
                status,
                stderr,
                unread_from,
            },
            Self::Truncated(received) => HostError::Protocol {
                command,
                message: format!(
                    "its output ended inside a packet ({received} bytes of it were received); \
                     it {status}"
                ),
                stderr,
            },
            Self::Protocol(message) => HostError::Protocol {
                command,
                message,
                stderr,
            },
            Self::CompilerError { id, kind, message }
                if id != crate::protocol::VERSION_COMPILATION_ID && id != ERROR_ID =>
            {
                return Some(Failure::Culprit {
                    id,
                    culprit: HostError::CompilerFailed {
                        command: command.clone(),
                        kind: kind.clone(),
                        message: message.clone(),
                    },
                    bystander: HostError::StoppedByOther {
                        command,
                        culprit: id,
                        message,
                    },
                })
            }
            Self::CompilerError { id, kind, message } => HostError::Protocol {
                command,
                message: format!(
                    "the compiler reported a protocol error ({kind}) for compilation {id}: \
                     {message}"
                ),
                stderr,
            },
            Self::Incompatible(protocol_version, compiler_version) => {
                HostError::IncompatibleVersion {
                    command,
                    protocol_version,
                    compiler_version,
                }
            }
        }))
    }
}

/// Frames, decodes and routes the compiler's output, whoever reads it.
#[derive(Debug, Default)]
pub(crate) struct PacketRouter {
    decoder: PacketDecoder,
    buf: BytesMut,
}

impl PacketRouter {
    /// Adds bytes read from the compiler.
    pub(crate) fn extend(&mut self, bytes: &[u8]) {
        self.buf.extend_from_slice(bytes);
    }

    /// Routes every complete packet in the buffer. Replies the dispatcher
    /// asks for (requests of abandoned compilations) are handed to `reply`.
    pub(crate) fn route(
        &mut self,
        dispatcher: &Dispatcher,
        reader: Option<u64>,
        mut reply: impl FnMut(Vec<u8>),
    ) -> Result<(), ReadEnd> {
        loop {
            let packet = match self.decoder.decode(&mut self.buf) {
                Ok(Some(packet)) => packet,
                Ok(None) => return Ok(()),
                Err(error) => return Err(ReadEnd::Protocol(format!("malformed output: {error}"))),
            };
            let message = match crate::protocol::decode_outbound(packet.payload) {
                Ok(OutboundMessage {
                    message: Some(message),
                }) => message,
                Ok(OutboundMessage { message: None }) => {
                    return Err(ReadEnd::Protocol(format!(
                        "an empty OutboundMessage for compilation {}",
                        packet.compilation_id
                    )))
                }
                Err(error) => {
                    return Err(ReadEnd::Protocol(format!(
                        "undecodable OutboundMessage for compilation {}: {error}",
                        packet.compilation_id
                    )))
                }
            };
            match dispatcher.route(packet.compilation_id, message, reader) {
                Routing::Done => {}
                Routing::Reply(compilation_id, message) => {
                    reply(encode_packet(compilation_id, &*message));
                }
                Routing::Violation(message) => return Err(ReadEnd::Protocol(message)),
                Routing::CompilerError { id, kind, message } => {
                    return Err(ReadEnd::CompilerError { id, kind, message })
                }
                Routing::Incompatible(protocol, compiler) => {
                    return Err(ReadEnd::Incompatible(protocol, compiler))
                }
            }
        }
    }

    /// Whether the compiler has begun a packet it has not finished writing.
    pub(crate) fn mid_packet(&self) -> bool {
        self.decoder.mid_packet(&self.buf)
    }

    /// What the end of the compiler's output means, given the bytes left.
    pub(crate) fn end_of_output(&self) -> ReadEnd {
        match self.decoder.finish(&self.buf) {
            Ok(()) => ReadEnd::Eof,
            Err(_) => ReadEnd::Truncated(self.buf.len()),
        }
    }
}

/// After the compiler's output ended: kills it if it must, waits for it to
/// exit and for its last words on stderr, then tells every caller how it
/// ended.
async fn finish(connection: Arc<Connection>, end: ReadEnd) {
    let process = &connection.process;
    if end.kills() {
        process.kill();
    }
    let ending = process.ending(&*connection.executor, EXIT_GRACE).await;
    process
        .stderr_settled(&*connection.executor, STDERR_GRACE)
        .await;
    // What it never read, it never saw: those compilations run elsewhere.
    let unread_from = connection.outbox.read_position();
    if let Some(failure) = end.failure(&connection.dispatcher, process, ending, unread_from) {
        connection.dispatcher.fail_with(failure);
    }
    connection.outbox.close_input();
    (connection.on_end)();
}

/// Keeps the tail of the compiler's stderr. Its end means the compiler
/// exited: an idle compiler is then retired and reaped at once (so a
/// compiler that died between compiles is replaced, not blamed on the next
/// compile); a busy one has its output read to the end, callers waiting or
/// not.
async fn stderr_task(connection: Weak<Connection>, stderr: File, tail: Arc<Mutex<StderrTail>>) {
    let Some(executor) = connection.upgrade().map(|c| c.executor.clone()) else {
        return;
    };
    // A read error ends the capture; the tail so far is kept.
    let _ = process::capture_stderr(&*executor, stderr, &tail).await;
    let Some(connection) = connection.upgrade() else {
        return;
    };
    connection.process.mark_stderr_done();
    connection.stderr_ended.store(true, Ordering::Release);
    // A compiler that ends before answering the handshake is broken, not
    // idle: reading its output tells its first compilation how it ended.
    let dispatcher = &connection.dispatcher;
    if dispatcher.handshake_done() && dispatcher.close_if_idle() && dispatcher.in_flight() == 0 {
        connection.outbox.close_input();
        let _ = connection.process.ending(&*executor, EXIT_GRACE).await;
        (connection.on_end)();
    }
    connection.arm_background_reader();
}

/// Reads for nobody in particular while [`Connection::needs_background_reader`]:
/// routes messages to whoever they are for, answers the requests of detached
/// compilations, and reaches the end of a dead compiler's output.
async fn background_reader(connection: Weak<Connection>) {
    let Some(signal) = connection.upgrade().map(|c| c.background.clone()) else {
        return;
    };
    loop {
        signal.wait().await;
        let Some(strong) = connection.upgrade() else {
            return;
        };
        let watch = crate::sys::waitable(&strong.lock_reader().stdout)
            .and_then(|stdout| strong.executor.watch(stdout, Interest::Read));
        let Ok(watch) = watch else {
            return;
        };
        drop(strong);
        loop {
            let Some(strong) = connection.upgrade() else {
                return;
            };
            if !strong.needs_background_reader() {
                break;
            }
            // Waits for a caller reading right now instead of skipping: the
            // readiness this task woke to is spent (tokio's is
            // edge-triggered), so what that caller leaves unread would wake
            // nobody.
            strong.read_with(strong.lock_reader(), None, None);
            if !strong.needs_background_reader() {
                break;
            }
            drop(strong);
            if executor::ready(&*watch).await.is_err() {
                break;
            }
        }
    }
}

/// The reader thread (see [`crate::wait`]): reads the compiler's output
/// with blocking reads until it ends, and routes each piece as a background
/// reader would (no caller reads, so every wake-up it causes is queued for
/// the runtimes and rings the kick). It holds the connection only while it
/// routes: a connection dropped meanwhile ends it at its next read, which
/// the compiler's exit (its output's end) always brings.
fn read_on_thread(connection: Weak<Connection>, mut output: File) {
    let mut scratch = vec![0; 64 * 1024];
    loop {
        let read = loop {
            match output.read(&mut scratch) {
                Err(error) if error.kind() == ErrorKind::Interrupted => continue,
                read => break read,
            }
        };
        let Some(connection) = connection.upgrade() else {
            return;
        };
        let mut guard = connection.lock_reader();
        if guard.ended {
            return;
        }
        let end = match read {
            Ok(0) => Some(guard.router.end_of_output()),
            Ok(n) => {
                guard.router.extend(&scratch[..n]);
                connection.route_read(&mut guard.router, None).err()
            }
            Err(error) => Some(ReadEnd::Protocol(format!(
                "reading from the compiler failed: {error}"
            ))),
        };
        if let Some(end) = end {
            connection.end_reading(guard, end);
            return;
        }
    }
}

/// Fails and kills a compiler that has not answered the version handshake
/// within `timeout`. Looks more and more rarely, and ends as soon as the
/// handshake is done (a compiler answers in milliseconds), so that a task
/// outlives its compiler by little however often compilers restart.
async fn startup_watch(connection: Weak<Connection>, timeout: Duration) {
    let Some(executor) = connection.upgrade().map(|c| c.executor.clone()) else {
        return;
    };
    let deadline = std::time::Instant::now() + timeout;
    let mut step = Duration::from_millis(5);
    let connection = loop {
        let Some(connection) = connection.upgrade() else {
            return;
        };
        let dispatcher = &connection.dispatcher;
        if dispatcher.handshake_done() || dispatcher.failure().is_some() {
            return;
        }
        let Some(left) = deadline.checked_duration_since(std::time::Instant::now()) else {
            break connection;
        };
        drop(connection);
        executor.sleep(step.min(left)).await;
        step = (step * 2).min(Duration::from_millis(500));
    };
    let (dispatcher, process) = (&connection.dispatcher, &connection.process);
    // Fail before killing, so that this, not the end of its output that the
    // kill causes, is what callers are told.
    dispatcher.fail(HostError::Protocol {
        command: process.command().to_owned(),
        message: format!(
            "it did not answer the version request within {:.1} s of starting",
            timeout.as_secs_f64()
        ),
        stderr: process.stderr_tail(),
    });
    process.kill();
}

/// Closes the compiler once nothing has been in flight for `timeout`.
async fn idle_watch(connection: Weak<Connection>, timeout: Duration) {
    let Some(executor) = connection.upgrade().map(|c| c.executor.clone()) else {
        return;
    };
    loop {
        let Some(connection) = connection.upgrade() else {
            return;
        };
        let dispatcher = connection.dispatcher();
        if dispatcher.is_closed() {
            return;
        }
        let wait = match dispatcher.idle_since() {
            Some(since) if since.elapsed() >= timeout => {
                if dispatcher.close_if_idle() {
                    connection.outbox.close_input();
                    // It exits when its input closes, unless another process
                    // holds that input open too (a child forked meanwhile):
                    // then it is killed.
                    let process = connection.process.clone();
                    let weak = Arc::downgrade(&connection);
                    drop(connection);
                    let _ = process.ending(&*executor, EXIT_GRACE).await;
                    if let Some(connection) = weak.upgrade() {
                        (connection.on_end)();
                    }
                    return;
                }
                timeout
            }
            Some(since) => timeout - since.elapsed(),
            None => timeout,
        };
        drop(connection);
        executor.sleep(wait).await;
    }
}
