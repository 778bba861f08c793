//! The caller's side of one compilation (or version request): its channel,
//! the requests it still owes answers to, and what happens when it is
//! abandoned.
//!
//! A caller asks for its next message with [`Compilation::poll`], which
//! never blocks: it returns the message (reading the compiler's output
//! itself if need be) or a [`Wait`] to do before asking again. The caller
//! waits however its runtime waits (Ruby's own waits, which take part in
//! signal handling and fiber scheduling; `poll(2)` and a parker in
//! [`Compilation::recv`]). It answers each request with
//! [`Compilation::respond`], and is done when a `CompileResponse` or a
//! failure arrives.
//!
//! A compilation whose compiler ended before it could matter to the caller
//! is run again on another compiler, without the caller seeing anything but
//! the requests of the run that ends it (see [`Compilation::take`]): one
//! whose request the compiler never read (it died while idle, before or as
//! the request was written: as often as that happens, up to one more time
//! than the host may have compilers); one the compiler read but answered
//! nothing of (no callback, no log event) when it died (killed, out of
//! memory), once; and one whose compiler stopped because of *another*
//! compilation (see [`HostError::StoppedByOther`]), once. A compile that
//! kills its compiler itself so fails on its second run, with the error of
//! that compiler's end.
//!
//! If the handle is dropped before the end — the calling thread was
//! interrupted, a callback threw, a panic unwound — the drop answers every
//! request it had received but not answered with an error, detaches the
//! compilation so whoever reads answers the rest the same way, and leaves
//! its id taken until the compiler finishes it.

use std::sync::Arc;
use std::time::{Duration, Instant};

use bytes::Bytes;

use crate::connection::{Connection, Next, Slept, PARK_PATIENCE};
use crate::dispatcher::wait_for;
use crate::dispatcher::{error_reply, Event, Key, Registration, Request, ABANDONED};
use crate::error::HostError;
use crate::framing::{encode_packet, encode_varint, frame, packet_body, varint_len};
use crate::host::Pool;
use crate::protocol::{inbound_message, outbound_message, InboundMessage};
use crate::wait::{spin, spin::answers::Answer, Fds, Wait, Waker};

/// What a caller gets.
#[derive(Debug)]
pub enum Received {
    /// A message of this compilation.
    Message(outbound_message::Message),
    /// The compilation cannot finish: the connection failed.
    Failed(HostError),
}

/// The outcome of [`Compilation::poll`].
#[derive(Debug)]
pub enum Step {
    /// The next message or failure.
    Ready(Received),
    /// Nothing yet: wait so, then poll again.
    Wait(Wait),
}

/// The `InboundMessage` field number of `compile_request`.
const COMPILE_REQUEST_FIELD: u32 = 2;

/// Encodes the packet of a `CompileRequest` without copying the request into
/// an `InboundMessage` first (sources may be megabytes).
fn encode_compile_request(
    compilation_id: u32,
    request: &inbound_message::CompileRequest,
) -> Vec<u8> {
    use prost::encoding::message;
    let body_len = message::encoded_len(COMPILE_REQUEST_FIELD, request);
    let length = varint_len(u64::from(compilation_id)) + body_len;
    let mut buf = Vec::with_capacity(varint_len(length as u64) + length);
    encode_varint(length as u64, &mut buf);
    encode_varint(u64::from(compilation_id), &mut buf);
    message::encode(COMPILE_REQUEST_FIELD, request, &mut buf);
    buf
}

/// A caller's registration on a connection, and how it waits there.
#[derive(Debug)]
struct Inbox {
    connection: Arc<Connection>,
    registration: Registration,
    key: Key,
    /// How the caller is woken when it parks (kept to register again).
    waker: Waker,
    /// What the caller slept on last: silenced before looking again.
    slept: Slept,
    /// Nothing was asked yet: the request just went out.
    fresh: bool,
    /// How long to read on for a half-written packet once woken: set when
    /// the caller, a thread, was told to spin ([`spin::settle`]).
    settle: Option<Duration>,
    /// The answer it waits for, timed to learn how long answers take (see
    /// [`crate::wait::spin::answers`]).
    answer: Answer,
    /// The fork generation of the process that started it (see
    /// [`Inbox::forked`]).
    generation: u64,
    /// Counted among the callers in flight while it lives (a lone caller
    /// may spin before it sleeps: see [`crate::wait::spin`]).
    _caller: spin::Caller,
}

impl Inbox {
    fn new(
        connection: Arc<Connection>,
        registration: Registration,
        key: Key,
        waker: Waker,
    ) -> Self {
        Self {
            connection,
            registration,
            key,
            waker,
            slept: Slept::Nothing,
            fresh: true,
            settle: None,
            answer: Answer::default(),
            generation: crate::fork::generation(),
            _caller: spin::Caller::enter(),
        }
    }

    /// Whether this is a forked child of the process that started the
    /// request (a callback forked, and the child came back to the compile).
    /// The child then touches nothing of it: the compiler's pipes are the
    /// parent's, whose messages it would take and whose stream it would
    /// garble, and a lock another thread of the parent held at the fork
    /// stays held in the child for ever.
    fn forked(&self) -> bool {
        self.generation != crate::fork::generation()
    }

    /// The next event, or how to wait for it.
    fn next(&mut self) -> Result<Event, Wait> {
        if self.forked() {
            return Ok(Event::Failed(HostError::Forked));
        }
        let fresh = std::mem::replace(&mut self.fresh, false);
        let slept = std::mem::take(&mut self.slept);
        let settle = self.settle.take();
        match self.connection.next(
            self.key,
            self.registration.token,
            &self.registration.inbox,
            slept,
            fresh,
            settle,
        ) {
            Next::Event(event) => {
                self.answer.came(spin::callers() == 1);
                Ok(event)
            }
            Next::Wait(wait, slept) => {
                // Watching the compiler alone: the wait is for this
                // caller's own answer, nobody else's.
                let watching = matches!(slept, Slept::Selector);
                self.answer.waits(watching && spin::callers() == 1);
                self.slept = slept;
                // A fiber never spins (the runtime waits for it in its
                // scheduler), so it never settles either.
                if let (Wait::Spin(_, budget, _), Waker::Thread(_)) = (&wait, &self.waker) {
                    self.settle = Some(spin::settle(*budget));
                }
                Err(wait)
            }
        }
    }

    fn try_recv(&self) -> Option<Event> {
        self.registration.inbox.try_recv().ok()
    }

    fn send(&self, packet: Vec<u8>) -> Result<(), HostError> {
        if self.forked() {
            return Err(HostError::Forked);
        }
        self.connection.send(Bytes::from(packet)).map(|_| ())
    }
}

/// The wait_for mode's state: whether the request went out, and the baton.
#[derive(Debug, Default)]
struct Turn {
    sent: bool,
    baton: Option<wait_for::Baton>,
}

/// One compilation in flight, as its caller sees it.
#[derive(Debug)]
pub struct Compilation {
    pool: Arc<Pool>,
    inbox: Inbox,
    /// The request's packet, kept to run it again elsewhere.
    request: Bytes,
    /// Where in the compiler's input the request was written (`None`: not
    /// yet, or not at all).
    sent_at: Option<u64>,
    nested: bool,
    /// Run again after a compiler's end that it may have caused (it read
    /// the request): at most once.
    retried: bool,
    /// Run again after compilers that never read the request.
    unread_runs: usize,
    /// This run received a message (a callback, a log event): its user's
    /// code may have run, so it is not run again after its compiler died.
    answered: bool,
    owed: Vec<Request>,
    finished: bool,
    turn: Option<Turn>,
}

impl Compilation {
    /// Registers a compilation on `connection` and sends its request (in the
    /// wait_for mode, once the baton is held). If the compiler does not take
    /// the request (it died while idle) and `may_refuse`, the compilation is
    /// forgotten and an error returned, so that the caller tries another
    /// compiler; otherwise the compilation learns how the compiler ended from
    /// [`poll`](Self::poll). `waker` is the one `registration` was made with.
    #[allow(clippy::too_many_arguments)]
    pub(crate) fn start(
        pool: Arc<Pool>,
        connection: Arc<Connection>,
        registration: Registration,
        waker: Waker,
        request: &inbound_message::CompileRequest,
        nested: bool,
        wait_for: bool,
        may_refuse: bool,
    ) -> Result<Self, HostError> {
        let packet = Bytes::from(encode_compile_request(registration.id, request));
        let key = Key::Compilation(registration.id);
        let mut compilation = Self {
            pool,
            inbox: Inbox::new(connection, registration, key, waker),
            request: packet,
            sent_at: None,
            nested,
            retried: false,
            unread_runs: 0,
            answered: false,
            owed: Vec::new(),
            finished: false,
            turn: wait_for.then(Turn::default),
        };
        if compilation.turn.is_none() && compilation.send_request().is_err() {
            if may_refuse {
                compilation.unregister();
                return Err(compilation.inbox.connection.gone());
            }
            // The connection's end will tell this compilation how it ended.
            compilation.inbox.connection.arm_background_reader();
        }
        Ok(compilation)
    }

    fn send_request(&mut self) -> Result<(), HostError> {
        self.sent_at = Some(self.inbox.connection.send(self.request.clone())?);
        Ok(())
    }

    /// Forgets a compilation whose request never reached the compiler.
    fn unregister(&mut self) {
        let registration = &self.inbox.registration;
        self.inbox
            .connection
            .dispatcher()
            .unregister(registration.id, registration.token);
        self.finished = true;
    }

    /// The compilation id.
    pub fn id(&self) -> u32 {
        self.inbox.registration.id
    }

    /// The next message or failure, or what to wait on before asking again.
    /// Never blocks.
    pub fn poll(&mut self) -> Step {
        if self.inbox.forked() {
            self.finished = true;
            return Step::Ready(Received::Failed(HostError::Forked));
        }
        loop {
            if let Some(turn) = &mut self.turn {
                if !turn.sent {
                    if let Some(event) = self.inbox.try_recv() {
                        if let Some(received) = self.take(event) {
                            return Step::Ready(received);
                        }
                        continue;
                    }
                    match wait_for::try_acquire() {
                        Ok(Ok(baton)) => {
                            turn.baton = Some(baton);
                            turn.sent = true;
                            if self.send_request().is_err() {
                                // The failure reaches the channel.
                                self.inbox.connection.arm_background_reader();
                            }
                        }
                        Ok(Err(fd)) => {
                            return Step::Wait(Wait::Fds(Fds::one(fd), Some(PARK_PATIENCE)))
                        }
                        Err(error) => {
                            self.finished = true;
                            return Step::Ready(Received::Failed(HostError::Io {
                                command: "the wait_for baton".into(),
                                message: error.to_string(),
                            }));
                        }
                    }
                }
            }
            match self.inbox.next() {
                Ok(event) => {
                    if let Some(received) = self.take(event) {
                        return Step::Ready(received);
                    }
                }
                Err(wait) => return Step::Wait(wait),
            }
        }
    }

    /// Blocks this thread until the next message or failure (see
    /// [`Wait::block`]).
    pub fn recv(&mut self) -> Received {
        loop {
            match self.poll() {
                Step::Ready(received) => return received,
                Step::Wait(wait) => wait.block(&self.inbox.waker, None),
            }
        }
    }

    /// Like [`recv`](Self::recv), but gives up after `timeout` (returning
    /// `None`).
    pub fn recv_timeout(&mut self, timeout: Duration) -> Option<Received> {
        let deadline = Instant::now() + timeout;
        loop {
            match self.poll() {
                Step::Ready(received) => return Some(received),
                Step::Wait(wait) => {
                    let left = deadline.checked_duration_since(Instant::now())?;
                    wait.block(&self.inbox.waker, Some(left));
                }
            }
        }
    }

    /// Turns an event into what the caller gets; `None` if the compilation
    /// was started again elsewhere instead.
    fn take(&mut self, event: Event) -> Option<Received> {
        match event {
            Event::Message(message) => {
                self.answered = true;
                if matches!(message, outbound_message::Message::CompileResponse(_)) {
                    self.finish();
                } else if let Some(owed) = Request::of(&message) {
                    self.owed.push(owed);
                }
                Some(Received::Message(message))
            }
            Event::Failed(error) if self.may_run_again(&error) => match self.restart() {
                Ok(()) => None,
                Err(error) => {
                    self.finish();
                    Some(Received::Failed(error))
                }
            },
            Event::Failed(error) => {
                self.finish();
                Some(Received::Failed(error))
            }
        }
    }

    /// Whether the compiler's end with `error` leaves this compilation to
    /// run again elsewhere, as if nothing had happened (counted here):
    ///
    /// - the compiler never saw the request (written to one that was
    ///   already dying, or not written): nothing ran, so it may go on to the
    ///   next compiler, however many of the host's compilers died at once
    ///   (all of them, when a container's memory limit or an operator kills
    ///   them), up to one more than the host may start;
    /// - the compiler read it, answered nothing, and died (killed, crashed,
    ///   its pipes broken): no user code ran, so once; should it die again,
    ///   the compile may be what kills it, and its error is reported;
    /// - another compilation stopped the compiler: once.
    fn may_run_again(&mut self, error: &HostError) -> bool {
        if error.never_reached(self.sent_at) {
            self.unread_runs += 1;
            return self.unread_runs <= self.pool.max_processes() + 1;
        }
        let unanswered_death = error.is_death() && !self.answered;
        if self.retried || !(unanswered_death || error.is_retryable()) {
            return false;
        }
        self.retried = true;
        true
    }

    fn finish(&mut self) {
        self.finished = true;
        if let Some(turn) = &mut self.turn {
            turn.baton = None;
        }
    }

    /// Runs the compilation again on another compiler (see
    /// [`may_run_again`](Self::may_run_again)).
    fn restart(&mut self) -> Result<(), HostError> {
        let body = packet_body(&self.request)
            .expect("the request is a whole packet")
            .to_vec();
        let waker = self.inbox.waker.clone();
        let (connection, registration) = self.pool.register(self.nested, waker.clone())?;
        self.request = Bytes::from(frame(registration.id, &body));
        let key = Key::Compilation(registration.id);
        self.inbox = Inbox::new(connection, registration, key, waker);
        self.sent_at = None;
        self.answered = false;
        // Whatever the first run asked for, the compiler that asked is gone.
        self.owed.clear();
        if self.turn.as_ref().is_some_and(|turn| !turn.sent) {
            return Ok(());
        }
        if self.send_request().is_err() {
            // The new compiler died too (before the host noticed): the end
            // of its output tells this compilation how, and whether to go
            // on to another.
            self.inbox.connection.arm_background_reader();
        }
        Ok(())
    }

    /// Sends the answer to a request this compilation received. If the
    /// compiler is gone, the failure arrives through [`poll`](Self::poll).
    pub fn respond(&mut self, message: inbound_message::Message) {
        if self.inbox.forked() {
            // The parent answers; `poll` tells this child why it cannot.
            return;
        }
        if let Some(answered) = Request::answered_by(&message) {
            self.owed.retain(|owed| *owed != answered);
        }
        let packet = encode_packet(
            self.inbox.registration.id,
            &InboundMessage {
                message: Some(message),
            },
        );
        if self.inbox.send(packet).is_err() {
            // Nobody may be reading: make sure the end is noticed.
            self.inbox.connection.arm_background_reader();
        }
    }
}

impl Drop for Compilation {
    fn drop(&mut self) {
        if self.finished || self.inbox.forked() {
            return;
        }
        // From here on whoever reads answers this compilation's requests.
        let registration = &self.inbox.registration;
        let connection = &self.inbox.connection;
        connection
            .dispatcher()
            .detach(registration.id, registration.token);
        // Requests already taken from the channel, or still queued in it,
        // were routed before the detach and are answered here.
        let mut replies: Vec<InboundMessage> = self
            .owed
            .drain(..)
            .map(|owed| InboundMessage {
                message: Some(owed.error_response(ABANDONED.to_owned())),
            })
            .collect();
        while let Some(event) = self.inbox.try_recv() {
            if let Event::Message(message) = event {
                replies.extend(error_reply(&message, ABANDONED));
            }
        }
        for reply in replies {
            // If the connection is gone there is nobody left to answer.
            let _ = self.inbox.send(encode_packet(registration.id, &reply));
        }
        // Nobody may come back to read for it.
        connection.arm_background_reader();
    }
}

/// A `VersionRequest` in flight.
#[derive(Debug)]
pub struct VersionQuery {
    inbox: Inbox,
    done: bool,
}

impl VersionQuery {
    /// Sends a `VersionRequest` on `connection`. If the compiler does not
    /// take it and `may_refuse`, fails (so the caller asks another); else the
    /// query learns how the compiler ended from [`poll`](Self::poll).
    /// `waker` is the one `registration` was made with.
    pub(crate) fn start(
        connection: Arc<Connection>,
        registration: Registration,
        waker: Waker,
        may_refuse: bool,
    ) -> Result<Self, HostError> {
        let message = InboundMessage {
            message: Some(inbound_message::Message::VersionRequest(
                inbound_message::VersionRequest {
                    id: registration.id,
                },
            )),
        };
        let packet = encode_packet(crate::protocol::VERSION_COMPILATION_ID, &message);
        let key = Key::Version(registration.id);
        let query = Self {
            inbox: Inbox::new(connection, registration, key, waker),
            done: false,
        };
        if let Err(error) = query.inbox.send(packet) {
            if may_refuse {
                return Err(error);
            }
            query.inbox.connection.arm_background_reader();
        }
        Ok(query)
    }

    /// The response or a failure, or what to wait on before asking again.
    pub fn poll(&mut self) -> Step {
        match self.inbox.next() {
            Ok(event) => {
                self.done = true;
                Step::Ready(match event {
                    Event::Message(message) => Received::Message(message),
                    Event::Failed(error) => Received::Failed(error),
                })
            }
            Err(wait) => Step::Wait(wait),
        }
    }

    /// Blocks this thread until the response or a failure (see
    /// [`Wait::block`]).
    pub fn recv(&mut self) -> Received {
        loop {
            match self.poll() {
                Step::Ready(received) => return received,
                Step::Wait(wait) => wait.block(&self.inbox.waker, None),
            }
        }
    }
}

impl Drop for VersionQuery {
    fn drop(&mut self) {
        if !self.done && !self.inbox.forked() {
            self.inbox
                .connection
                .dispatcher()
                .forget_version(self.inbox.registration.id, self.inbox.registration.token);
        }
    }
}
