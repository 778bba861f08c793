//! The multiplexed dispatch mode: a *writer* task writes each packet whole,
//! in the order callers queued them, and a *reader* task routes each packet
//! the compiler writes straight to the channel of its compilation. Callers
//! never touch the pipes, so any number of compilations run at once.

use std::os::fd::OwnedFd;
use std::sync::Arc;

use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::unix::pipe;
use tokio::runtime::Handle;
use tokio::sync::mpsc;

use crate::connection::{PacketRouter, ReadEnd, EXIT_GRACE, STDERR_GRACE};
use crate::dispatcher::Dispatcher;
use crate::error::HostError;
use crate::process::CompilerProcess;

/// What the writer task is asked to do.
#[derive(Debug)]
enum WriterCommand {
    /// Write this packet.
    Packet(Vec<u8>),
    /// Close the compiler's stdin, which asks it to exit.
    Close,
}

/// The callers' side of the writer task.
#[derive(Debug)]
pub(crate) struct Writer(mpsc::UnboundedSender<WriterCommand>);

impl Writer {
    /// Queues one packet.
    pub(crate) fn send(&self, packet: Vec<u8>) -> Result<(), ()> {
        self.0.send(WriterCommand::Packet(packet)).map_err(|_| ())
    }

    /// Asks the writer to close the compiler's stdin after what is queued.
    pub(crate) fn close(&self) {
        let _ = self.0.send(WriterCommand::Close);
    }
}

/// Starts the reader and writer tasks on `runtime`.
pub(crate) fn start(
    runtime: &Handle,
    stdin: OwnedFd,
    stdout: OwnedFd,
    dispatcher: Arc<Dispatcher>,
    process: Arc<CompilerProcess>,
) -> std::io::Result<Writer> {
    let _guard = runtime.enter();
    let stdin = pipe::Sender::from_owned_fd(stdin)?;
    let stdout = pipe::Receiver::from_owned_fd(stdout)?;
    let (outbox, queue) = mpsc::unbounded_channel();
    runtime.spawn(write_loop(
        stdin,
        queue,
        dispatcher.clone(),
        process.clone(),
    ));
    runtime.spawn(read_loop(
        stdout,
        dispatcher,
        Writer(outbox.clone()),
        process,
    ));
    Ok(Writer(outbox))
}

/// Writes queued packets whole, in order, until asked to close.
async fn write_loop(
    mut stdin: pipe::Sender,
    mut queue: mpsc::UnboundedReceiver<WriterCommand>,
    dispatcher: Arc<Dispatcher>,
    process: Arc<CompilerProcess>,
) {
    while let Some(command) = queue.recv().await {
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
                    command: process.command().to_owned(),
                    message: format!("writing to the compiler failed: {error}"),
                });
                process.kill();
            }
            return;
        }
    }
}

/// Reads packets and routes each one until the output ends or breaks, then
/// fails the callers as the end requires.
async fn read_loop(
    mut stdout: pipe::Receiver,
    dispatcher: Arc<Dispatcher>,
    writer: Writer,
    process: Arc<CompilerProcess>,
) {
    let mut router = PacketRouter::default();
    let end = loop {
        match stdout.read_buf(router.buffer()).await {
            Ok(0) => break router.end_of_output(),
            Ok(_) => {}
            Err(error) => {
                break ReadEnd::Protocol(format!("reading from the compiler failed: {error}"))
            }
        }
        if let Err(end) = router.route(&dispatcher, |reply| {
            let _ = writer.send(reply);
        }) {
            break end;
        }
    };
    drop(stdout);
    if end.kills() {
        process.kill();
    }
    let ending = process.ending(EXIT_GRACE).await;
    process.stderr_settled(STDERR_GRACE).await;
    if let Some(error) = end.error(&dispatcher, &process, ending) {
        dispatcher.fail(error);
    }
    writer.close();
}
