//! The caller's side of one compilation (or version request): its channel,
//! the requests it still owes answers to, and what happens when it is
//! abandoned.
//!
//! A caller receives its messages with [`Compilation::recv`] (blocking) or
//! [`Compilation::try_recv`], answers each request with
//! [`Compilation::respond`], and is done when a `CompileResponse` or a
//! failure arrives. If the handle is dropped before that — the calling thread
//! was interrupted, a callback threw, a panic unwound — the drop answers every
//! request it had received but not answered with an error, detaches the
//! compilation so the reader answers the rest the same way, and leaves its id
//! taken until the compiler finishes it.

use std::sync::Arc;

use crossbeam_channel::{RecvTimeoutError, TryRecvError};

use crate::connection::Connection;
use crate::dispatch::{wait_for, Transport};
use crate::dispatcher::{error_reply, Event, Registration, Request, Waker, ABANDONED};
use crate::error::HostError;
use crate::framing::encode_packet;
use crate::protocol::{inbound_message, outbound_message, InboundMessage};

/// What a caller gets from its channel.
#[derive(Debug)]
pub enum Received {
    /// A message of this compilation.
    Message(outbound_message::Message),
    /// The compilation cannot finish: the connection failed.
    Failed(HostError),
    /// Someone woke the caller (an interrupt is pending).
    Woken,
}

/// Where a caller's events come from: its channel, filled by the reader task
/// (multiplexed mode) or by the caller's own reading (wait_for mode).
#[derive(Debug)]
struct Inbox {
    registration: Registration,
    connection: Arc<Connection>,
    /// The wait_for mode's state: the request until the baton is held, then
    /// the baton.
    turn: Option<Turn>,
}

#[derive(Debug)]
struct Turn {
    io: Arc<wait_for::Inline>,
    request: Option<Vec<u8>>,
    baton: Option<wait_for::Baton>,
}

impl Inbox {
    /// Sends the request `packet` now (multiplexed) or once the baton is held
    /// (wait_for).
    fn new(
        connection: Arc<Connection>,
        registration: Registration,
        packet: Vec<u8>,
    ) -> Result<Self, HostError> {
        let turn = match connection.transport() {
            Transport::WaitFor(io) => Some(Turn {
                io: io.clone(),
                request: Some(packet),
                baton: None,
            }),
            Transport::Multiplexed(_) => {
                connection.send(packet)?;
                None
            }
        };
        Ok(Self {
            registration,
            connection,
            turn,
        })
    }

    fn waker(&self) -> Waker {
        let waker = self.registration.waker.clone();
        match &self.turn {
            Some(turn) => waker.with_poll(turn.io.poll_waker()),
            None => waker,
        }
    }

    /// The next event; `None` if the channel is gone.
    fn recv(&mut self) -> Option<Event> {
        let Some(turn) = &mut self.turn else {
            return self.registration.inbox.recv().ok();
        };
        loop {
            match self.registration.inbox.try_recv() {
                Ok(event) => return Some(event),
                Err(TryRecvError::Disconnected) => return None,
                Err(TryRecvError::Empty) => {}
            }
            if turn.baton.is_none() {
                match wait_for::acquire(&self.registration.inbox) {
                    wait_for::Acquired::Event(event) => return Some(*event),
                    wait_for::Acquired::Baton(baton) => turn.baton = Some(baton),
                }
                if let Some(request) = turn.request.take() {
                    if turn.io.send(&request).is_err() {
                        return Some(Event::Failed(self.connection.gone()));
                    }
                }
                continue;
            }
            if turn.io.pump() {
                // The output ended: the dispatcher failed every caller, but
                // a caller registered too late would wait forever.
                if let Ok(event) = self.registration.inbox.try_recv() {
                    return Some(event);
                }
                return Some(Event::Failed(self.connection.gone()));
            }
        }
    }

    /// Like [`recv`](Self::recv), giving up after `timeout` (in the wait_for
    /// mode the reading itself is not bounded).
    fn recv_timeout(&mut self, timeout: std::time::Duration) -> Result<Event, RecvTimeoutError> {
        if self.turn.is_some() {
            return self.recv().ok_or(RecvTimeoutError::Disconnected);
        }
        self.registration.inbox.recv_timeout(timeout)
    }

    fn try_recv(&mut self) -> Result<Event, TryRecvError> {
        self.registration.inbox.try_recv()
    }

    /// Gives the baton back (wait_for mode) once the compilation is over.
    fn release(&mut self) {
        if let Some(turn) = &mut self.turn {
            turn.baton = None;
        }
    }
}

/// One compilation in flight, as its caller sees it.
#[derive(Debug)]
pub struct Compilation {
    inbox: Inbox,
    owed: Vec<Request>,
    finished: bool,
}

impl Compilation {
    /// Registers a compilation on `connection` and sends its request.
    pub(crate) fn start(
        connection: Arc<Connection>,
        registration: Registration,
        request: &inbound_message::CompileRequest,
    ) -> Result<Self, HostError> {
        let message = InboundMessage {
            message: Some(inbound_message::Message::CompileRequest(request.clone())),
        };
        let packet = encode_packet(registration.id, &message);
        Ok(Self {
            inbox: Inbox::new(connection, registration, packet)?,
            owed: Vec::new(),
            finished: false,
        })
    }

    /// The compilation id.
    pub fn id(&self) -> u32 {
        self.inbox.registration.id
    }

    /// A waker that makes a blocked [`recv`](Self::recv) return
    /// [`Received::Woken`]; safe to call from any thread.
    pub fn waker(&self) -> Waker {
        self.inbox.waker()
    }

    /// Blocks until the next message, failure or wake.
    pub fn recv(&mut self) -> Received {
        let event = self.inbox.recv();
        self.take(event)
    }

    /// Like [`recv`](Self::recv), but gives up after `timeout` (returning
    /// `None`).
    pub fn recv_timeout(&mut self, timeout: std::time::Duration) -> Option<Received> {
        match self.inbox.recv_timeout(timeout) {
            Ok(event) => Some(self.take(Some(event))),
            Err(RecvTimeoutError::Timeout) => None,
            Err(RecvTimeoutError::Disconnected) => Some(self.take(None)),
        }
    }

    /// The next message, failure or wake, if one is waiting.
    pub fn try_recv(&mut self) -> Option<Received> {
        match self.inbox.try_recv() {
            Ok(event) => Some(self.take(Some(event))),
            Err(TryRecvError::Empty) => None,
            Err(TryRecvError::Disconnected) => Some(self.take(None)),
        }
    }

    fn take(&mut self, event: Option<Event>) -> Received {
        let received = match event {
            Some(Event::Message(message)) => {
                if matches!(message, outbound_message::Message::CompileResponse(_)) {
                    self.finished = true;
                } else if let Some(owed) = Request::of(&message) {
                    self.owed.push(owed);
                }
                Received::Message(message)
            }
            Some(Event::Failed(error)) => {
                self.finished = true;
                Received::Failed(error)
            }
            Some(Event::Wake) => Received::Woken,
            // The waker holds a sender, so the channel cannot disconnect
            // while this handle exists; treat it as a closed connection.
            None => {
                self.finished = true;
                Received::Failed(HostError::Closed)
            }
        };
        if self.finished {
            self.inbox.release();
        }
        received
    }

    /// Sends the answer to a request this compilation received.
    pub fn respond(&mut self, message: inbound_message::Message) -> Result<(), HostError> {
        if let Some(answered) = Request::answered_by(&message) {
            self.owed.retain(|owed| *owed != answered);
        }
        self.send(&InboundMessage {
            message: Some(message),
        })
    }

    fn send(&self, message: &InboundMessage) -> Result<(), HostError> {
        self.inbox
            .connection
            .send(encode_packet(self.inbox.registration.id, message))
    }
}

impl Drop for Compilation {
    fn drop(&mut self) {
        if self.finished {
            return;
        }
        // From here on the reader answers this compilation's requests itself.
        let registration = &self.inbox.registration;
        let dispatcher = self.inbox.connection.dispatcher();
        dispatcher.detach(registration.id, registration.token);
        // Requests already taken from the channel, or still queued in it,
        // were routed before the detach and are answered here.
        let mut replies: Vec<InboundMessage> = self
            .owed
            .drain(..)
            .map(|owed| InboundMessage {
                message: Some(owed.error_response(ABANDONED.to_owned())),
            })
            .collect();
        while let Ok(event) = self.inbox.try_recv() {
            if let Event::Message(message) = event {
                replies.extend(error_reply(&message, ABANDONED));
            }
        }
        for reply in replies {
            // If the connection is gone there is nobody left to answer.
            let _ = self.send(&reply);
        }
    }
}

/// A `VersionRequest` in flight.
#[derive(Debug)]
pub struct VersionQuery {
    inbox: Inbox,
}

impl VersionQuery {
    pub(crate) fn start(
        connection: Arc<Connection>,
        registration: Registration,
    ) -> Result<Self, HostError> {
        let message = InboundMessage {
            message: Some(inbound_message::Message::VersionRequest(
                inbound_message::VersionRequest {
                    id: registration.id,
                },
            )),
        };
        let packet = encode_packet(crate::protocol::VERSION_COMPILATION_ID, &message);
        Ok(Self {
            inbox: Inbox::new(connection, registration, packet)?,
        })
    }

    /// A waker that makes a blocked [`recv`](Self::recv) return
    /// [`Received::Woken`].
    pub fn waker(&self) -> Waker {
        self.inbox.waker()
    }

    /// Blocks until the response, a failure or a wake.
    pub fn recv(&mut self) -> Received {
        let event = self.inbox.recv();
        self.take(event)
    }

    /// The response, a failure or a wake, if one is waiting.
    pub fn try_recv(&mut self) -> Option<Received> {
        match self.inbox.try_recv() {
            Ok(event) => Some(self.take(Some(event))),
            Err(TryRecvError::Empty) => None,
            Err(TryRecvError::Disconnected) => Some(self.take(None)),
        }
    }

    fn take(&mut self, event: Option<Event>) -> Received {
        let received = match event {
            Some(Event::Message(message)) => Received::Message(message),
            Some(Event::Failed(error)) => Received::Failed(error),
            Some(Event::Wake) => return Received::Woken,
            None => Received::Failed(HostError::Closed),
        };
        self.inbox.release();
        received
    }
}

impl Drop for VersionQuery {
    fn drop(&mut self) {
        self.inbox
            .connection
            .dispatcher()
            .forget_version(self.inbox.registration.id);
    }
}
