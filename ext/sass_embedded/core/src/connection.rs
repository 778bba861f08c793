//! One running compiler: its process, its routing table, and the dispatch
//! mode that carries packets to and from it.
//!
//! Whatever the mode, bytes from the compiler go through one [`PacketRouter`]
//! (framing, decoding, routing by compilation id), and the end of the
//! compiler's output becomes one [`HostError`] by one set of rules: when the
//! compiler exits, breaks the protocol, or reports a protocol error, every
//! compilation in flight fails with an error that says what happened, and the
//! compiler is killed if it is still running. The host then starts a fresh
//! connection for the next compilation.
//!
//! Tokio tasks watch every connection: one keeps the tail of the compiler's
//! stderr, one fails a compiler that does not answer the version handshake in
//! time, and an optional one closes the compiler after a period with nothing
//! in flight.

use std::sync::Arc;
use std::time::Duration;

use bytes::BytesMut;
use tokio::runtime::Handle;

use crate::dispatch::{self, DispatchMode, Transport};
use crate::dispatcher::{Dispatcher, RegisterError, Registration, Routing};
use crate::error::HostError;
use crate::framing::{encode_packet, PacketDecoder};
use crate::process::{self, CompilerCommand, CompilerProcess, Ending, StderrTail};
use crate::protocol::{inbound_message, InboundMessage, OutboundMessage};

/// How long the compiler gets to exit on its own after its stdin closed or its
/// stdout ended, before it is killed.
pub(crate) const EXIT_GRACE: Duration = Duration::from_secs(2);
/// How long to wait for the compiler's last words on stderr after it ended.
pub(crate) const STDERR_GRACE: Duration = Duration::from_millis(500);

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
    process: Arc<CompilerProcess>,
    transport: Transport,
}

impl Connection {
    /// Starts a compiler, its watchers on `runtime` and its transport, and
    /// sends the version handshake. Compilations may be started at once: they
    /// are written after the handshake and routed only if it succeeds.
    pub fn start(
        command: &CompilerCommand,
        runtime: &Handle,
        mode: DispatchMode,
        timeouts: Timeouts,
    ) -> Result<Arc<Self>, HostError> {
        let spawned = process::spawn(command)?;
        let command_line = command.to_string();

        // Pipes register with the runtime's reactor, so they are made inside it.
        let _guard = runtime.enter();
        let tail = StderrTail::shared();
        let stderr_task = {
            let tail = tail.clone();
            let stderr = spawned.stderr;
            runtime.spawn(async move {
                // A read error ends the capture; the tail so far is kept.
                let _ = process::capture_stderr(stderr, tail).await;
            })
        };
        let process = Arc::new(CompilerProcess::new(
            spawned.child,
            command_line.clone(),
            tail,
            stderr_task,
        ));

        let handshake_id = 0;
        let dispatcher = Arc::new(Dispatcher::new(handshake_id));
        let transport = match dispatch::start(
            mode,
            runtime,
            spawned.stdin,
            spawned.stdout,
            dispatcher.clone(),
            process.clone(),
        ) {
            Ok(transport) => transport,
            Err(error) => {
                process.kill();
                let _ = process.ending_blocking(Duration::ZERO);
                return Err(HostError::Io {
                    command: command_line,
                    message: error.to_string(),
                });
            }
        };
        let handshake = InboundMessage {
            message: Some(inbound_message::Message::VersionRequest(
                inbound_message::VersionRequest { id: handshake_id },
            )),
        };
        let connection = Arc::new(Self {
            dispatcher: dispatcher.clone(),
            process: process.clone(),
            transport,
        });
        connection.send(encode_packet(
            crate::protocol::VERSION_COMPILATION_ID,
            &handshake,
        ))?;

        if let Some(timeout) = timeouts.idle {
            runtime.spawn(idle_watch(Arc::downgrade(&connection), timeout));
        }
        runtime.spawn(startup_watch(dispatcher, process, timeouts.startup));
        Ok(connection)
    }

    /// The routing table.
    pub fn dispatcher(&self) -> &Arc<Dispatcher> {
        &self.dispatcher
    }

    /// The transport of this connection's dispatch mode.
    pub(crate) fn transport(&self) -> &Transport {
        &self.transport
    }

    /// The compiler's process id.
    pub fn pid(&self) -> u32 {
        self.process.pid()
    }

    /// Whether new compilations may start here. (In the wait_for mode nobody
    /// reads while no compile runs, so a compiler that died in the meantime is
    /// noticed here.)
    pub fn is_open(&self) -> bool {
        if let Transport::WaitFor(_) = self.transport {
            if self.dispatcher.in_flight() == 0 && self.process.try_ending().is_some() {
                self.dispatcher.close();
            }
        }
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

    /// Sends one encoded packet (queued for the writer, or written at once,
    /// depending on the dispatch mode).
    pub fn send(&self, packet: Vec<u8>) -> Result<(), HostError> {
        self.transport.send(packet).map_err(|()| self.gone())
    }

    /// The error to report when the compiler can no longer be written to.
    pub(crate) fn gone(&self) -> HostError {
        self.dispatcher.failure().unwrap_or(HostError::Closed)
    }

    /// Fails what is in flight with `error` and asks the compiler to exit
    /// (closes its stdin), without waiting.
    pub fn fail_and_close(&self, error: HostError) {
        self.dispatcher.fail(error);
        self.transport.close_input();
    }

    /// Closes the compiler: fails what is in flight with `error`, closes its
    /// stdin, and waits (blocking, at most `grace`) for it to exit before
    /// killing it.
    pub fn close(&self, error: HostError, grace: Duration) {
        self.fail_and_close(error);
        let _ = self.process.ending_blocking(grace);
    }

    /// Closes the compiler without waiting: a detached thread reaps it, so no
    /// zombie is left and the caller (a finalizer, say) never blocks.
    pub fn close_detached(&self) {
        self.fail_and_close(HostError::Closed);
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

/// Why reading the compiler's output stopped.
#[derive(Debug)]
pub(crate) enum ReadEnd {
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

impl ReadEnd {
    /// Whether the compiler must be killed before its ending is awaited.
    pub(crate) fn kills(&self) -> bool {
        matches!(self, Self::Protocol(_) | Self::Incompatible(..))
    }

    /// The error every caller gets, or `None` for an orderly close (the
    /// compiler's output ended after its input was closed with nothing in
    /// flight).
    pub(crate) fn error(
        self,
        dispatcher: &Dispatcher,
        process: &CompilerProcess,
        (status, signaled): Ending,
    ) -> Option<HostError> {
        let command = process.command().to_owned();
        let stderr = process.stderr_tail();
        Some(match self {
            Self::Eof if dispatcher.is_closed() && dispatcher.in_flight() == 0 => return None,
            Self::Eof => HostError::Exited {
                command,
                status,
                stderr,
            },
            // A compiler killed while writing says more by its signal than by
            // the half packet it left.
            Self::Truncated(_) if signaled => HostError::Exited {
                command,
                status,
                stderr,
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
            Self::Incompatible(protocol_version, compiler_version) => {
                HostError::IncompatibleVersion {
                    command,
                    protocol_version,
                    compiler_version,
                }
            }
        })
    }
}

/// Frames, decodes and routes the compiler's output, whoever reads it: the
/// reader task of the multiplexed mode, or the calling thread of the
/// wait_for mode.
#[derive(Debug, Default)]
pub(crate) struct PacketRouter {
    decoder: PacketDecoder,
    buf: BytesMut,
}

impl PacketRouter {
    /// Where the next read should put its bytes.
    pub(crate) fn buffer(&mut self) -> &mut BytesMut {
        if self.buf.capacity() - self.buf.len() < 4096 {
            self.buf.reserve(64 * 1024);
        }
        &mut self.buf
    }

    /// Routes every complete packet in the buffer. Replies the dispatcher
    /// asks for (requests of abandoned compilations) are handed to `reply`.
    pub(crate) fn route(
        &mut self,
        dispatcher: &Dispatcher,
        mut reply: impl FnMut(Vec<u8>),
    ) -> Result<(), ReadEnd> {
        loop {
            let packet = match self.decoder.decode(&mut self.buf) {
                Ok(Some(packet)) => packet,
                Ok(None) => return Ok(()),
                Err(error) => return Err(ReadEnd::Protocol(format!("malformed output: {error}"))),
            };
            let message = match <OutboundMessage as prost::Message>::decode(packet.payload) {
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
            match dispatcher.route(packet.compilation_id, message) {
                Routing::Done => {}
                Routing::Reply(compilation_id, message) => {
                    reply(encode_packet(compilation_id, &*message));
                }
                Routing::Violation(message) | Routing::CompilerError(message) => {
                    return Err(ReadEnd::Protocol(message))
                }
                Routing::Incompatible(protocol, compiler) => {
                    return Err(ReadEnd::Incompatible(protocol, compiler))
                }
            }
        }
    }

    /// What the end of the compiler's output means, given the bytes left.
    pub(crate) fn end_of_output(&self) -> ReadEnd {
        match self.decoder.finish(&self.buf) {
            Ok(()) => ReadEnd::Eof,
            Err(_) => ReadEnd::Truncated(self.buf.len()),
        }
    }
}

/// Fails and kills a compiler that has not answered the version handshake
/// within `timeout`.
async fn startup_watch(
    dispatcher: Arc<Dispatcher>,
    process: Arc<CompilerProcess>,
    timeout: Duration,
) {
    tokio::time::sleep(timeout).await;
    if dispatcher.handshake_done() || dispatcher.failure().is_some() {
        return;
    }
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
async fn idle_watch(connection: std::sync::Weak<Connection>, timeout: Duration) {
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
                    connection.transport.close_input();
                    return;
                }
                timeout
            }
            Some(since) => timeout - since.elapsed(),
            None => timeout,
        };
        drop(connection);
        tokio::time::sleep(wait).await;
    }
}
