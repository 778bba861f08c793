//! One running compiler and the tasks that talk to it.
//!
//! A connection owns the compiler process and three tokio tasks: the *writer*
//! writes each packet whole, in the order callers queued them; the *reader*
//! decodes packets and hands each message to the [`Dispatcher`], which sends
//! it straight to the channel of its compilation; the *stderr* task keeps the
//! tail of the compiler's stderr for error messages. An optional idle watcher
//! closes the compiler after a period with nothing in flight.
//!
//! When the compiler exits, breaks the protocol, or reports a protocol error,
//! the connection fails every compilation in flight with an error that says
//! what happened, and kills the compiler if it is still running. The host
//! then starts a fresh connection for the next compilation.

use std::process::Child;
use std::sync::{Arc, Mutex, PoisonError};
use std::time::{Duration, Instant};

use bytes::BytesMut;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::unix::pipe;
use tokio::runtime::Handle;
use tokio::sync::mpsc;
use tokio::task::JoinHandle;

use crate::dispatcher::{Dispatcher, RegisterError, Registration, Routing};
use crate::error::HostError;
use crate::framing::{encode_packet, PacketDecoder};
use crate::process::{self, CompilerCommand, StderrTail};
use crate::protocol::{inbound_message, InboundMessage, OutboundMessage};

/// How long the compiler gets to exit on its own after its stdin closed or its
/// stdout ended, before it is killed.
const EXIT_GRACE: Duration = Duration::from_secs(2);
/// How long to wait for the compiler's last words on stderr after it ended.
const STDERR_GRACE: Duration = Duration::from_millis(500);

/// What the writer task is asked to do.
#[derive(Debug)]
enum WriterCommand {
    /// Write this packet.
    Packet(Vec<u8>),
    /// Close the compiler's stdin, which asks it to exit.
    Close,
}

/// The compiler process and what is known of it.
#[derive(Debug)]
struct ProcessState {
    child: Mutex<Child>,
    stderr: Arc<Mutex<StderrTail>>,
    stderr_task: Mutex<Option<JoinHandle<()>>>,
    command: String,
}

impl ProcessState {
    fn stderr_tail(&self) -> String {
        self.stderr
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .snapshot()
    }

    /// How the compiler ended and whether a signal ended it, if it has.
    fn try_exit_status(&self) -> Option<(String, bool)> {
        let mut child = self.child.lock().unwrap_or_else(PoisonError::into_inner);
        match child.try_wait() {
            Ok(Some(status)) => Some((
                process::describe_exit(status),
                std::os::unix::process::ExitStatusExt::signal(&status).is_some(),
            )),
            Ok(None) => None,
            Err(error) => Some((format!("could not be waited for ({error})"), false)),
        }
    }

    fn kill(&self) {
        let mut child = self.child.lock().unwrap_or_else(PoisonError::into_inner);
        // Fails only if the process was already reaped, which is the goal.
        let _ = child.kill();
    }

    /// Waits (asynchronously) for the compiler to exit; kills it after
    /// `grace`. Returns how it ended, and whether a signal ended it.
    async fn exit_status(&self, grace: Duration) -> (String, bool) {
        let deadline = Instant::now() + grace;
        loop {
            if let Some(status) = self.try_exit_status() {
                return status;
            }
            if Instant::now() >= deadline {
                self.kill();
                // SIGKILL ends a process promptly; reap it so no zombie stays.
                let status = self
                    .child
                    .lock()
                    .unwrap_or_else(PoisonError::into_inner)
                    .wait()
                    .map(process::describe_exit)
                    .unwrap_or_else(|error| format!("could not be waited for ({error})"));
                return (
                    format!("closed its output but kept running, so it was killed ({status})"),
                    false,
                );
            }
            tokio::time::sleep(Duration::from_millis(5)).await;
        }
    }

    /// Waits until the stderr task has read everything, for at most `grace`.
    async fn stderr_settled(&self, grace: Duration) {
        let task = self
            .stderr_task
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .take();
        if let Some(task) = task {
            let _ = tokio::time::timeout(grace, task).await;
        }
    }

    /// Blocking wait for the compiler to exit, killing it after `grace`, from
    /// a thread outside the runtime.
    fn reap_blocking(&self, grace: Duration) {
        let deadline = Instant::now() + grace;
        while self.try_exit_status().is_none() {
            if Instant::now() >= deadline {
                self.kill();
                let mut child = self.child.lock().unwrap_or_else(PoisonError::into_inner);
                let _ = child.wait();
                return;
            }
            std::thread::sleep(Duration::from_millis(5));
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
}

/// One running compiler and its routing table.
#[derive(Debug)]
pub struct Connection {
    dispatcher: Arc<Dispatcher>,
    outbox: mpsc::UnboundedSender<WriterCommand>,
    process: Arc<ProcessState>,
    pid: u32,
}

impl Connection {
    /// Starts a compiler and its tasks on `runtime`, and queues the version
    /// handshake. Compilations may be started at once: they are written after
    /// the handshake and routed only if it succeeds.
    pub fn start(
        command: &CompilerCommand,
        runtime: &Handle,
        timeouts: Timeouts,
    ) -> Result<Arc<Self>, HostError> {
        let spawned = process::spawn(command)?;
        let command_line = command.to_string();
        let pid = spawned.child.id();
        let io_error = |error: std::io::Error| HostError::Io {
            command: command_line.clone(),
            message: error.to_string(),
        };

        // Pipes register with the runtime's reactor, so they are made inside it.
        let _guard = runtime.enter();
        let process = Arc::new(ProcessState {
            child: Mutex::new(spawned.child),
            stderr: StderrTail::shared(),
            stderr_task: Mutex::new(None),
            command: command_line.clone(),
        });
        let pipes = (|| {
            Ok::<_, std::io::Error>((
                pipe::Sender::from_owned_fd(spawned.stdin)?,
                pipe::Receiver::from_owned_fd(spawned.stdout)?,
            ))
        })();
        let (stdin, stdout) = match pipes {
            Ok(pipes) => pipes,
            Err(error) => {
                process.kill();
                process.reap_blocking(Duration::ZERO);
                return Err(io_error(error));
            }
        };
        let stderr_task = {
            let tail = process.stderr.clone();
            let stderr = spawned.stderr;
            runtime.spawn(async move {
                // A read error ends the capture; the tail so far is kept.
                let _ = process::capture_stderr(stderr, tail).await;
            })
        };
        *process
            .stderr_task
            .lock()
            .unwrap_or_else(PoisonError::into_inner) = Some(stderr_task);

        let handshake_id = 0;
        let dispatcher = Arc::new(Dispatcher::new(command_line, handshake_id));
        let (outbox, outbox_rx) = mpsc::unbounded_channel();
        let handshake = InboundMessage {
            message: Some(inbound_message::Message::VersionRequest(
                inbound_message::VersionRequest { id: handshake_id },
            )),
        };
        // The receiver is alive: it is moved into the writer just below.
        let _ = outbox.send(WriterCommand::Packet(encode_packet(
            crate::protocol::VERSION_COMPILATION_ID,
            &handshake,
        )));

        runtime.spawn(write_loop(
            stdin,
            outbox_rx,
            dispatcher.clone(),
            process.clone(),
        ));
        runtime.spawn(read_loop(
            stdout,
            dispatcher.clone(),
            outbox.clone(),
            process.clone(),
        ));
        if let Some(timeout) = timeouts.idle {
            runtime.spawn(idle_watch(dispatcher.clone(), outbox.clone(), timeout));
        }
        runtime.spawn(startup_watch(
            dispatcher.clone(),
            process.clone(),
            timeouts.startup,
        ));

        Ok(Arc::new(Self {
            dispatcher,
            outbox,
            process,
            pid,
        }))
    }

    /// The routing table.
    pub fn dispatcher(&self) -> &Arc<Dispatcher> {
        &self.dispatcher
    }

    /// The compiler's process id.
    pub fn pid(&self) -> u32 {
        self.pid
    }

    /// Whether new compilations may start here.
    pub fn is_open(&self) -> bool {
        !self.dispatcher.is_closed()
    }

    /// How many compilations hold one of this compiler's slots.
    pub fn load(&self) -> usize {
        self.dispatcher.compilations_in_flight()
    }

    /// Registers a compilation.
    pub fn register_compilation(&self) -> Result<Registration, RegisterError> {
        self.dispatcher.register_compilation()
    }

    /// Registers a version request.
    pub fn register_version(&self) -> Result<Registration, RegisterError> {
        self.dispatcher.register_version()
    }

    /// Queues one encoded packet for the writer.
    pub fn send(&self, packet: Vec<u8>) -> Result<(), HostError> {
        self.outbox
            .send(WriterCommand::Packet(packet))
            .map_err(|_| self.gone())
    }

    /// The error to report when the writer is no longer there.
    fn gone(&self) -> HostError {
        self.dispatcher.failure().unwrap_or(HostError::Closed)
    }

    /// Fails what is in flight with `error` and asks the compiler to exit
    /// (closes its stdin), without waiting.
    pub fn fail_and_close(&self, error: HostError) {
        self.dispatcher.fail(error);
        let _ = self.outbox.send(WriterCommand::Close);
    }

    /// Closes the compiler: fails what is in flight with `error`, closes its
    /// stdin, and waits (blocking, at most `grace`) for it to exit before
    /// killing it.
    pub fn close(&self, error: HostError, grace: Duration) {
        self.fail_and_close(error);
        self.process.reap_blocking(grace);
    }

    /// Closes the compiler without waiting: a detached thread reaps it, so no
    /// zombie is left and the caller (a finalizer, say) never blocks.
    pub fn close_detached(&self) {
        self.dispatcher.fail(HostError::Closed);
        let _ = self.outbox.send(WriterCommand::Close);
        let process = self.process.clone();
        let spawned = std::thread::Builder::new()
            .name("sass-embedded-reaper".into())
            .spawn(move || process.reap_blocking(EXIT_GRACE));
        if spawned.is_err() {
            // No thread to wait with: make sure the compiler at least ends.
            self.process.kill();
        }
    }
}

/// Writes queued packets whole, in order, until asked to close.
async fn write_loop(
    mut stdin: pipe::Sender,
    mut outbox: mpsc::UnboundedReceiver<WriterCommand>,
    dispatcher: Arc<Dispatcher>,
    process: Arc<ProcessState>,
) {
    while let Some(command) = outbox.recv().await {
        let packet = match command {
            WriterCommand::Packet(packet) => packet,
            WriterCommand::Close => return,
        };
        if let Err(error) = stdin.write_all(&packet).await {
            // The compiler stopped reading: usually it died, and the reader
            // will say how. If it is still running, it must not be left with
            // callers waiting on it.
            tokio::time::sleep(EXIT_GRACE).await;
            if dispatcher.failure().is_none() {
                dispatcher.fail(HostError::Io {
                    command: process.command.clone(),
                    message: format!("writing to the compiler failed: {error}"),
                });
                process.kill();
            }
            return;
        }
    }
}

/// Why the reader stopped.
enum ReadEnd {
    /// The compiler closed its stdout between packets.
    Eof,
    /// The compiler closed its stdout inside a packet, after this many bytes
    /// of it.
    Truncated(usize),
    /// The compiler broke the protocol or reported a protocol error: it must
    /// be stopped, and every caller told this.
    Protocol(String),
    /// The compiler speaks another protocol version.
    Incompatible(String, String),
}

/// Reads packets and routes each one, until the stream ends or breaks.
async fn read_loop(
    mut stdout: pipe::Receiver,
    dispatcher: Arc<Dispatcher>,
    outbox: mpsc::UnboundedSender<WriterCommand>,
    process: Arc<ProcessState>,
) {
    let end = read_packets(&mut stdout, &dispatcher, &outbox).await;
    drop(stdout);
    match end {
        ReadEnd::Eof if dispatcher.is_closed() && dispatcher.in_flight() == 0 => {
            // An orderly close: the compiler exits because its stdin closed.
            let _ = process.exit_status(EXIT_GRACE).await;
        }
        ReadEnd::Eof => {
            let (status, _) = process.exit_status(EXIT_GRACE).await;
            process.stderr_settled(STDERR_GRACE).await;
            dispatcher.fail(HostError::Exited {
                command: process.command.clone(),
                status,
                stderr: process.stderr_tail(),
            });
        }
        ReadEnd::Truncated(received) => {
            let (status, signaled) = process.exit_status(EXIT_GRACE).await;
            process.stderr_settled(STDERR_GRACE).await;
            let command = process.command.clone();
            let stderr = process.stderr_tail();
            // A compiler killed while writing says more by its signal than by
            // the half packet it left.
            dispatcher.fail(if signaled {
                HostError::Exited {
                    command,
                    status,
                    stderr,
                }
            } else {
                HostError::Protocol {
                    command,
                    message: format!(
                        "its output ended inside a packet ({received} bytes of it were received); \
                         it {status}"
                    ),
                    stderr,
                }
            });
        }
        ReadEnd::Protocol(message) => {
            process.kill();
            let _ = process.exit_status(EXIT_GRACE).await;
            process.stderr_settled(STDERR_GRACE).await;
            dispatcher.fail(HostError::Protocol {
                command: process.command.clone(),
                message,
                stderr: process.stderr_tail(),
            });
        }
        ReadEnd::Incompatible(protocol_version, compiler_version) => {
            process.kill();
            let _ = process.exit_status(EXIT_GRACE).await;
            dispatcher.fail(HostError::IncompatibleVersion {
                command: process.command.clone(),
                protocol_version,
                compiler_version,
            });
        }
    }
    let _ = outbox.send(WriterCommand::Close);
}

async fn read_packets(
    stdout: &mut pipe::Receiver,
    dispatcher: &Dispatcher,
    outbox: &mpsc::UnboundedSender<WriterCommand>,
) -> ReadEnd {
    let mut decoder = PacketDecoder::default();
    let mut buf = BytesMut::with_capacity(64 * 1024);
    loop {
        match stdout.read_buf(&mut buf).await {
            Ok(0) => {
                return match decoder.finish(&buf) {
                    Ok(()) => ReadEnd::Eof,
                    Err(_) => ReadEnd::Truncated(buf.len()),
                }
            }
            Ok(_) => {}
            Err(error) => {
                return ReadEnd::Protocol(format!("reading from the compiler failed: {error}"))
            }
        }
        loop {
            let packet = match decoder.decode(&mut buf) {
                Ok(Some(packet)) => packet,
                Ok(None) => break,
                Err(error) => return ReadEnd::Protocol(format!("malformed output: {error}")),
            };
            let message = match <OutboundMessage as prost::Message>::decode(packet.payload) {
                Ok(OutboundMessage {
                    message: Some(message),
                }) => message,
                Ok(OutboundMessage { message: None }) => {
                    return ReadEnd::Protocol(format!(
                        "an empty OutboundMessage for compilation {}",
                        packet.compilation_id
                    ))
                }
                Err(error) => {
                    return ReadEnd::Protocol(format!(
                        "undecodable OutboundMessage for compilation {}: {error}",
                        packet.compilation_id
                    ))
                }
            };
            match dispatcher.route(packet.compilation_id, message) {
                Routing::Done => {}
                Routing::Reply(compilation_id, reply) => {
                    let _ =
                        outbox.send(WriterCommand::Packet(encode_packet(compilation_id, &reply)));
                }
                Routing::Violation(message) | Routing::CompilerError(message) => {
                    return ReadEnd::Protocol(message)
                }
                Routing::Incompatible(protocol, compiler) => {
                    return ReadEnd::Incompatible(protocol, compiler)
                }
            }
        }
    }
}

/// Fails and kills a compiler that has not answered the version handshake
/// within `timeout`.
async fn startup_watch(dispatcher: Arc<Dispatcher>, process: Arc<ProcessState>, timeout: Duration) {
    tokio::time::sleep(timeout).await;
    if dispatcher.handshake_done() || dispatcher.failure().is_some() {
        return;
    }
    // Fail before killing, so that this, not the end of its output that the
    // kill causes, is what callers are told.
    dispatcher.fail(HostError::Protocol {
        command: process.command.clone(),
        message: format!(
            "it did not answer the version request within {:.1} s of starting",
            timeout.as_secs_f64()
        ),
        stderr: process.stderr_tail(),
    });
    process.kill();
}

/// Closes the compiler once nothing has been in flight for `timeout`.
async fn idle_watch(
    dispatcher: Arc<Dispatcher>,
    outbox: mpsc::UnboundedSender<WriterCommand>,
    timeout: Duration,
) {
    loop {
        if dispatcher.is_closed() {
            return;
        }
        let wait = match dispatcher.idle_since() {
            Some(since) if since.elapsed() >= timeout => {
                if dispatcher.close_if_idle() {
                    let _ = outbox.send(WriterCommand::Close);
                    return;
                }
                timeout
            }
            Some(since) => timeout - since.elapsed(),
            None => timeout,
        };
        tokio::time::sleep(wait).await;
    }
}
