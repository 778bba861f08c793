//! The two dispatch modes: how packets travel between the callers and one
//! compiler. Both share the process, the framing, the routing table and the
//! failure rules of [`crate::connection`]; only who reads and writes differs.
//!
//! - [`multiplexed`] (the default): tokio tasks read and write; any number of
//!   compilations run at once, each caller waiting on its own channel.
//! - [`wait_for`] (the benchmark's baseline): the calling thread takes a
//!   process-wide baton for its whole compilation and reads and writes the
//!   pipes itself, one compilation at a time.

pub mod multiplexed;
pub mod wait_for;

use std::os::fd::OwnedFd;
use std::sync::Arc;

use tokio::runtime::Handle;

use crate::dispatcher::Dispatcher;
use crate::process::CompilerProcess;

/// Which dispatch mode a host uses.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum DispatchMode {
    /// Reader and writer tasks; compilations run concurrently.
    #[default]
    Multiplexed,
    /// The caller reads and writes under a process-wide baton.
    WaitFor,
}

/// The mode-specific half of a connection.
#[derive(Debug)]
pub(crate) enum Transport {
    Multiplexed(multiplexed::Writer),
    WaitFor(Arc<wait_for::Inline>),
}

impl Transport {
    /// Sends one whole packet; fails if the compiler's input is closed.
    pub(crate) fn send(&self, packet: Vec<u8>) -> Result<(), ()> {
        match self {
            Self::Multiplexed(writer) => writer.send(packet),
            Self::WaitFor(inline) => inline.send(&packet),
        }
    }

    /// Closes the compiler's input, which asks it to exit.
    pub(crate) fn close_input(&self) {
        match self {
            Self::Multiplexed(writer) => writer.close(),
            Self::WaitFor(inline) => inline.close_input(),
        }
    }
}

/// Sets up `mode`'s transport over the compiler's pipes.
pub(crate) fn start(
    mode: DispatchMode,
    runtime: &Handle,
    stdin: OwnedFd,
    stdout: OwnedFd,
    dispatcher: Arc<Dispatcher>,
    process: Arc<CompilerProcess>,
) -> std::io::Result<Transport> {
    Ok(match mode {
        DispatchMode::Multiplexed => Transport::Multiplexed(multiplexed::start(
            runtime, stdin, stdout, dispatcher, process,
        )?),
        DispatchMode::WaitFor => Transport::WaitFor(Arc::new(wait_for::Inline::new(
            stdin, stdout, dispatcher, process,
        )?)),
    })
}
