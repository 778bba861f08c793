//! Routing by compilation id, and who waits where: the table that says, for
//! every message the compiler sends, which caller gets it, and which caller
//! to wake for it.
//!
//! Each compilation registers a channel under a fresh compilation id;
//! whoever reads the compiler's output hands each decoded message to
//! [`Dispatcher::route`], which sends it straight to that channel. An id
//! stays taken until the compiler has sent the compilation's
//! `CompileResponse`, even if the caller gave up (was interrupted) long
//! before: such a compilation is *detached*, and requests the compiler still
//! sends for it are answered with errors here, so the compiler can finish
//! it. Version requests live on compilation id 0 and are routed by their
//! request id.
//!
//! # Waiting
//!
//! Callers read the compiler's output themselves (see
//! [`crate::connection`]). Of the callers waiting on one connection, one is
//! the *watcher*: it sleeps on the connection's selector (readable when the
//! compiler has written, or when the connection's *kick* rings) and reads
//! when it wakes. Every other waiter *parks*, holding no descriptor, and is
//! woken through its [`Waker`] when a message is routed to it (see
//! [`crate::wait`]). So with one compile in flight the caller reads its own
//! answer, with no other thread involved; with many, whoever reads hands the
//! others their messages, and the host holds the same few descriptors
//! however many callers wait. When the watcher stops waiting, a parked
//! caller is woken to take its place. One parked caller that may time out
//! (a thread, not a fiber) is the *deputy*: it looks at the compiler's
//! output itself after a while, in case the watcher is slow to read (a
//! fiber whose scheduler is busy); the others sleep until woken. The table
//! keeps, for each waiter, how it sleeps, so a routed message wakes exactly
//! the caller it is for.
//!
//! Nothing here reads or writes the compiler's pipes: the connection feeds
//! it messages and writes the replies it returns, so the routing rules are
//! tested without a compiler.
//!
//! Beside the table: the requests the host owes the compiler answers to
//! (`requests.rs`), and the dispatch modes (`mode.rs`, and `wait_for.rs`, the
//! baseline's baton).

mod mode;
mod requests;
pub mod wait_for;

pub use mode::DispatchMode;
use requests::check_message;
pub use requests::{error_reply, message_name, Request};

use std::collections::HashMap;
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};
use std::time::Instant;

use crossbeam_channel::{Receiver, Sender};

use crate::error::HostError;
use crate::protocol::{
    major_version, outbound_message, InboundMessage, ERROR_ID, PROTOCOL_MAJOR,
    VERSION_COMPILATION_ID,
};
use crate::wait::{Kick, Waker};

/// What a waiting caller receives.
#[derive(Debug)]
pub enum Event {
    /// A message from the compiler for this caller.
    Message(outbound_message::Message),
    /// The connection failed; no more messages will come.
    Failed(HostError),
}

/// A caller's registration: its ids and its channel.
#[derive(Debug)]
pub struct Registration {
    /// The compilation id (or, for version requests, the request id).
    pub id: u32,
    /// Distinguishes this registration from a later one that reuses the id.
    pub token: u64,
    /// Where this caller's messages arrive.
    pub inbox: Receiver<Event>,
}

/// Which registration a waiting caller is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Key {
    /// A compilation, by compilation id.
    Compilation(u32),
    /// A version request, by request id.
    Version(u32),
}

/// Why a registration was refused.
#[derive(Debug, PartialEq, Eq)]
pub enum RegisterError {
    /// The connection is closing (idle or by its owner): use another one.
    Closing,
    /// The connection failed with this error.
    Failed(HostError),
}

/// What the reader must do after routing one message.
#[derive(Debug, PartialEq)]
pub enum Routing {
    /// The message reached its caller (or was an event nobody needs).
    Done,
    /// A request for a detached compilation: write this reply to the compiler.
    Reply(u32, Box<InboundMessage>),
    /// The compiler broke the protocol: fail the connection with this error.
    Violation(String),
    /// The compiler reported a protocol error of its own, naming compilation
    /// `id` (0 or `u32::MAX` if it named none); it exits after that.
    CompilerError {
        /// The compilation id the error came with.
        id: u32,
        /// The error's type (`PARSE`, `PARAMS`, `INTERNAL`).
        kind: String,
        /// The compiler's message.
        message: String,
    },
    /// The compiler speaks another major protocol version: (protocol version,
    /// compiler version).
    Incompatible(String, String),
}

/// How the end of a connection fails its callers.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Failure {
    /// Every caller gets this error.
    All(HostError),
    /// The compiler stopped because of one compilation: that one gets
    /// `culprit`, every other caller `bystander`.
    Culprit {
        /// The compilation id of the culprit.
        id: u32,
        /// What the culprit is told.
        culprit: HostError,
        /// What everyone else is told.
        bystander: HostError,
    },
}

/// How a registered caller sleeps, if it waits.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Waiting {
    /// Not waiting: busy with what it received, or not yet asking.
    No,
    /// Parked, until its waker is woken.
    Park,
    /// On the connection's selector: the watcher.
    Watch,
}

/// How a caller should wait for its next event.
#[derive(Debug, PartialEq, Eq)]
pub enum Role {
    /// Not at all: something is in its channel already.
    Ready,
    /// On the connection's selector, as the watcher. `output_ended`: the
    /// compiler's output ended, so only the kick can still wake it.
    Watch {
        /// Nothing more can be read (the failure comes through the kick).
        output_ended: bool,
    },
    /// Parked until woken; the deputy (see the module docs) for at most
    /// the park patience.
    Park {
        /// Whether it is the deputy.
        deputy: bool,
    },
}

/// A caller attached to a registration.
#[derive(Debug)]
struct Waiter {
    token: u64,
    inbox: Sender<Event>,
    waker: Waker,
    waiting: Waiting,
}

#[derive(Debug)]
enum Route {
    Attached(Waiter),
    Detached { token: u64 },
}

impl Route {
    fn token(&self) -> u64 {
        match self {
            Self::Attached(waiter) => waiter.token,
            Self::Detached { token } => *token,
        }
    }
}

#[derive(Debug)]
enum Handshake {
    /// Waiting for the answer to the connection's first `VersionRequest`.
    Pending(u32),
    Done,
}

#[derive(Debug)]
struct Table {
    compilations: HashMap<u32, Route>,
    versions: HashMap<u32, Waiter>,
    next_compilation_id: u32,
    next_version_id: u32,
    next_token: u64,
    handshake: Handshake,
    failure: Option<HostError>,
    closing: bool,
    idle_since: Option<Instant>,
    /// The token of the caller waiting on the selector: one at a time, so
    /// the kick wakes the caller it was rung for.
    watcher: Option<u64>,
    /// The token of the parked caller that looks for itself after a while.
    deputy: Option<u64>,
    /// How many callers are parked.
    parked: usize,
    /// Wakes the watcher (it is part of the connection's selector).
    kick: Arc<Kick>,
    /// How many compilations are detached.
    detached: usize,
    /// Nobody reads the compiler's output any more: its end was reached.
    reading_ended: bool,
}

impl Table {
    fn in_flight(&self) -> usize {
        self.compilations.len() + self.versions.len()
    }

    fn note_activity(&mut self) {
        self.idle_since = if self.in_flight() == 0 {
            Some(Instant::now())
        } else {
            None
        };
    }

    fn check_open(&self) -> Result<(), RegisterError> {
        if let Some(error) = &self.failure {
            return Err(RegisterError::Failed(error.clone()));
        }
        if self.closing {
            return Err(RegisterError::Closing);
        }
        Ok(())
    }

    fn token(&mut self) -> u64 {
        self.next_token += 1;
        self.next_token
    }

    fn waiter(&mut self, key: Key, token: u64) -> Option<&mut Waiter> {
        let waiter = match key {
            Key::Compilation(id) => match self.compilations.get_mut(&id) {
                Some(Route::Attached(waiter)) => waiter,
                _ => return None,
            },
            Key::Version(id) => self.versions.get_mut(&id)?,
        };
        (waiter.token == token).then_some(waiter)
    }

    /// Records that the caller with `token`, which waited as `waiting`, no
    /// longer does. `by_caller`: the thread doing this returns to its
    /// runtime next (see [`Waker::wake`]).
    fn forget_wait(&mut self, token: u64, waiting: Waiting, by_caller: bool) {
        if waiting == Waiting::Park {
            self.parked -= 1;
            if self.deputy == Some(token) {
                self.deputy = None;
                self.appoint_deputy(by_caller);
            }
        }
        if self.watcher == Some(token) {
            self.watcher = None;
        }
    }

    /// The caller with `token`, which waited as `waiting`, leaves without
    /// having been woken (interrupted, or its request never went out). A
    /// watcher leaving so rings the kick: a fiber sleeps on the selector
    /// through a helper of its own, which must not outlive its wait.
    fn leave(&mut self, token: u64, waiting: Waiting) {
        if waiting == Waiting::Watch {
            self.kick.ring();
        }
        self.forget_wait(token, waiting, true);
        self.promote(true);
    }

    /// Forgets the waiter of a registration that `reader` (the caller reading,
    /// if a caller reads) has just removed, its last event delivered. A
    /// watcher other than the reader keeps the watch until it has woken to
    /// that event and said so ([`Table::let_go`]): it still sleeps on the
    /// selector, and a successor sleeping there beside it could silence the
    /// kick rung for it (or take the one rung for the successor), leaving its
    /// event unseen.
    fn retire(&mut self, waiter: &Waiter, reader: Option<u64>) {
        if waiter.waiting == Waiting::Watch && reader != Some(waiter.token) {
            return;
        }
        self.forget_wait(waiter.token, waiter.waiting, reader.is_some());
        self.promote(reader.is_some());
    }

    /// The caller with `token`, whose registration is gone, is awake (or
    /// gone): if it kept the watch (see [`Table::retire`]), it gives it up.
    fn let_go(&mut self, token: u64) {
        if self.watcher == Some(token) {
            self.watcher = None;
            self.promote(true);
        }
    }

    /// The parked callers.
    fn parked_waiters(&self) -> impl Iterator<Item = &Waiter> {
        self.compilations
            .values()
            .filter_map(|route| match route {
                Route::Attached(waiter) => Some(waiter),
                Route::Detached { .. } => None,
            })
            .chain(self.versions.values())
            .filter(|waiter| waiter.waiting == Waiting::Park)
    }

    /// If nobody watches but someone is parked, wakes one of them (a thread
    /// rather than a fiber, whose watch costs a helper) to take the watch.
    fn promote(&self, by_caller: bool) {
        if self.watcher.is_some() || self.parked == 0 {
            return;
        }
        let chosen = self
            .parked_waiters()
            .find(|waiter| waiter.waker.may_time_out())
            .or_else(|| self.parked_waiters().next());
        if let Some(waiter) = chosen {
            waiter.waker.wake(by_caller, &self.kick);
        }
    }

    /// The deputy stopped waiting: wakes a parked caller that may time out,
    /// which parks again as the new deputy.
    fn appoint_deputy(&self, by_caller: bool) {
        if let Some(waiter) = self
            .parked_waiters()
            .find(|waiter| waiter.waker.may_time_out())
        {
            waiter.waker.wake(by_caller, &self.kick);
        }
    }
}

/// Delivers `event` to `waiter` and, unless `reader` (the caller delivering
/// it while reading) is that waiter, wakes it where it sleeps. Gives the
/// event back if the waiter's channel is gone.
fn deliver(waiter: &Waiter, kick: &Kick, reader: Option<u64>, event: Event) -> Option<Event> {
    if let Err(error) = waiter.inbox.send(event) {
        return Some(error.0);
    }
    if reader == Some(waiter.token) {
        return None;
    }
    match waiter.waiting {
        Waiting::No => {}
        Waiting::Park => waiter.waker.wake(reader.is_some(), kick),
        Waiting::Watch => kick.ring(),
    }
    None
}

/// The routing table of one connection.
#[derive(Debug)]
pub struct Dispatcher {
    table: Mutex<Table>,
}

/// The message of the error sent for requests of a compilation whose caller
/// has gone.
pub const ABANDONED: &str =
    "the host abandoned this compilation: its caller was interrupted or went away";

impl Dispatcher {
    /// A dispatcher whose connection starts with a `VersionRequest` of id
    /// `handshake_id` on compilation 0. Until its answer arrives and says
    /// protocol 3, nothing else is routed. `kick` wakes the watcher.
    pub(crate) fn new(handshake_id: u32, kick: Arc<Kick>) -> Self {
        Self {
            table: Mutex::new(Table {
                compilations: HashMap::new(),
                versions: HashMap::new(),
                next_compilation_id: 1,
                next_version_id: handshake_id.wrapping_add(1),
                next_token: 0,
                handshake: Handshake::Pending(handshake_id),
                failure: None,
                closing: false,
                idle_since: Some(Instant::now()),
                watcher: None,
                deputy: None,
                parked: 0,
                kick,
                detached: 0,
                reading_ended: false,
            }),
        }
    }

    fn lock(&self) -> MutexGuard<'_, Table> {
        // A panic while holding the lock cannot leave the table half-updated
        // in a way that matters more than losing the connection would.
        self.table.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Takes a free compilation id and registers a channel for it; `waker`
    /// wakes its caller when it is parked.
    pub fn register_compilation(&self, waker: Waker) -> Result<Registration, RegisterError> {
        let mut table = self.lock();
        table.check_open()?;
        // Ids 0 and u32::MAX are reserved. An id is free once the compiler has
        // finished the compilation that used it, however long that takes.
        let mut id = table.next_compilation_id;
        while id == VERSION_COMPILATION_ID || id == ERROR_ID || table.compilations.contains_key(&id)
        {
            id = id.wrapping_add(1);
        }
        table.next_compilation_id = id.wrapping_add(1);
        let token = table.token();
        let (sender, inbox) = crossbeam_channel::unbounded();
        table
            .compilations
            .insert(id, Route::Attached(Waiter::new(token, sender, waker)));
        table.note_activity();
        Ok(Registration { id, token, inbox })
    }

    /// Registers a channel for a `VersionRequest` and returns its request id.
    pub fn register_version(&self, waker: Waker) -> Result<Registration, RegisterError> {
        let mut table = self.lock();
        table.check_open()?;
        let mut id = table.next_version_id;
        while id == ERROR_ID
            || table.versions.contains_key(&id)
            || matches!(table.handshake, Handshake::Pending(pending) if pending == id)
        {
            id = id.wrapping_add(1);
        }
        table.next_version_id = id.wrapping_add(1);
        let token = table.token();
        let (sender, inbox) = crossbeam_channel::unbounded();
        table.versions.insert(id, Waiter::new(token, sender, waker));
        table.note_activity();
        Ok(Registration { id, token, inbox })
    }

    /// Removes a compilation whose request never reached the compiler (its
    /// id is free again at once).
    pub fn unregister(&self, id: u32, token: u64) {
        let mut table = self.lock();
        if table.compilations.get(&id).map(Route::token) == Some(token) {
            if let Some(Route::Attached(waiter)) = table.compilations.remove(&id) {
                table.leave(token, waiter.waiting);
            }
            table.note_activity();
        } else {
            table.let_go(token);
        }
    }

    /// The caller of compilation `id` has gone. The id stays taken until the
    /// compiler finishes the compilation; until then its requests are
    /// answered with errors. Does nothing if `token` does not match (the
    /// compilation is already over and the id may belong to another one).
    /// Returns whether the compilation is now detached.
    pub fn detach(&self, id: u32, token: u64) -> bool {
        let mut table = self.lock();
        let Some(route) = table
            .compilations
            .get_mut(&id)
            .filter(|route| route.token() == token)
        else {
            table.let_go(token);
            return false;
        };
        let Route::Attached(waiter) = std::mem::replace(route, Route::Detached { token }) else {
            return true;
        };
        table.detached += 1;
        table.leave(token, waiter.waiting);
        true
    }

    /// The caller of version request `id` has gone.
    pub fn forget_version(&self, id: u32, token: u64) {
        let mut table = self.lock();
        if table.versions.get(&id).map(|waiter| waiter.token) == Some(token) {
            if let Some(waiter) = table.versions.remove(&id) {
                table.leave(token, waiter.waiting);
            }
        } else {
            table.let_go(token);
        }
        table.note_activity();
    }

    /// Decides how the caller `key` waits for its next event: as the
    /// watcher if nobody watches, else parked. `Ready` if its channel holds
    /// something already (or it is registered no more).
    pub fn wait_on(&self, key: Key, token: u64) -> Role {
        let mut table = self.lock();
        let (watcher, deputy, output_ended) = (table.watcher, table.deputy, table.reading_ended);
        let Some(waiter) = table.waiter(key, token) else {
            // Not registered any more: its channel holds the reason.
            return Role::Ready;
        };
        if !waiter.inbox.is_empty() {
            return Role::Ready;
        }
        if watcher.is_none() || watcher == Some(token) {
            let previous = std::mem::replace(&mut waiter.waiting, Waiting::Watch);
            table.watcher = Some(token);
            if previous == Waiting::Park {
                table.parked -= 1;
                if deputy == Some(token) {
                    table.deputy = None;
                    table.appoint_deputy(true);
                }
            }
            return Role::Watch { output_ended };
        }
        let may_time_out = waiter.waker.may_time_out();
        if std::mem::replace(&mut waiter.waiting, Waiting::Park) != Waiting::Park {
            table.parked += 1;
        }
        if deputy.is_none() && may_time_out {
            table.deputy = Some(token);
        }
        Role::Park {
            deputy: table.deputy == Some(token),
        }
    }

    /// The caller `key` has what it waited for and is busy with it.
    pub fn done_waiting(&self, key: Key, token: u64) {
        let mut table = self.lock();
        let Some(waiter) = table.waiter(key, token) else {
            table.let_go(token);
            return;
        };
        let waiting = std::mem::replace(&mut waiter.waiting, Waiting::No);
        if waiting == Waiting::No {
            return;
        }
        table.forget_wait(token, waiting, true);
        table.promote(true);
    }

    /// Nobody can read the compiler's output any more (it ended): the
    /// watcher, woken, goes on watching the kick alone, through which the
    /// failure will reach it (and, by it, the parked callers).
    pub fn set_reading_ended(&self) {
        let mut table = self.lock();
        table.reading_ended = true;
        table.kick.ring();
    }

    /// Whether something needs reading that no caller will come back for:
    /// compilations whose callers went away.
    pub fn has_detached(&self) -> bool {
        let table = self.lock();
        table.detached > 0 && !table.reading_ended
    }

    /// Routes one message the compiler sent under `compilation_id`.
    /// `reader` is the token of the caller reading, if a caller reads: it
    /// finds its own messages in its channel without being woken.
    pub fn route(
        &self,
        compilation_id: u32,
        message: outbound_message::Message,
        reader: Option<u64>,
    ) -> Routing {
        use outbound_message::Message;

        let mut table = self.lock();
        if let Message::Error(error) = &message {
            let kind = crate::protocol::ProtocolErrorType::try_from(error.r#type)
                .map(|kind| kind.as_str_name().to_owned())
                .unwrap_or_else(|_| format!("type {}", error.r#type));
            return Routing::CompilerError {
                id: compilation_id,
                kind,
                message: error.message.clone(),
            };
        }

        if let Handshake::Pending(handshake_id) = table.handshake {
            return match message {
                Message::VersionResponse(response)
                    if compilation_id == VERSION_COMPILATION_ID && response.id == handshake_id =>
                {
                    if major_version(&response.protocol_version) == Some(PROTOCOL_MAJOR) {
                        table.handshake = Handshake::Done;
                        Routing::Done
                    } else {
                        Routing::Incompatible(response.protocol_version, response.compiler_version)
                    }
                }
                other => Routing::Violation(format!(
                    "expected a VersionResponse first, got {} for compilation {compilation_id}",
                    message_name(&other)
                )),
            };
        }

        if compilation_id == VERSION_COMPILATION_ID {
            return match message {
                Message::VersionResponse(response) => {
                    if let Some(waiter) = table.versions.remove(&response.id) {
                        let _ = deliver(
                            &waiter,
                            &table.kick,
                            reader,
                            Event::Message(Message::VersionResponse(response)),
                        );
                        table.retire(&waiter, reader);
                        table.note_activity();
                    }
                    // A response to a request whose caller has gone is dropped.
                    Routing::Done
                }
                other => Routing::Violation(format!(
                    "{} sent with the reserved compilation id 0",
                    message_name(&other)
                )),
            };
        }

        let Some(route) = table.compilations.get(&compilation_id) else {
            return Routing::Violation(format!(
                "{} for compilation {compilation_id}, which is not running",
                message_name(&message)
            ));
        };
        if let Some(violation) = check_message(&message) {
            return Routing::Violation(violation);
        }

        let finished = matches!(message, Message::CompileResponse(_));
        let routing = match route {
            Route::Attached(waiter) => {
                // If the receiver is gone its owner is detaching right now;
                // the drop of the handle answers what it had queued.
                match deliver(waiter, &table.kick, reader, Event::Message(message)) {
                    Some(Event::Message(message)) => abandoned_reply(compilation_id, &message),
                    Some(Event::Failed(_)) | None => Routing::Done,
                }
            }
            Route::Detached { .. } => abandoned_reply(compilation_id, &message),
        };
        if finished {
            match table.compilations.remove(&compilation_id) {
                Some(Route::Attached(waiter)) => table.retire(&waiter, reader),
                Some(Route::Detached { .. }) => table.detached -= 1,
                None => {}
            }
            table.note_activity();
        }
        routing
    }

    /// Fails every registered caller with `error` and refuses new ones. The
    /// first failure is the one callers see.
    pub fn fail(&self, error: HostError) {
        self.fail_with(Failure::All(error));
    }

    /// Fails every registered caller as `failure` says and refuses new ones.
    /// Only the first failure counts.
    pub fn fail_with(&self, failure: Failure) {
        let mut table = self.lock();
        if table.failure.is_some() {
            let error = table.failure.clone().expect("checked");
            return self.fail_locked(&mut table, &Failure::All(error));
        }
        self.fail_locked(&mut table, &failure);
    }

    fn fail_locked(&self, table: &mut Table, failure: &Failure) {
        let (culprit, for_culprit, for_others) = match failure {
            Failure::All(error) => (None, error, error),
            Failure::Culprit {
                id,
                culprit,
                bystander,
            } => (Some(*id), culprit, bystander),
        };
        table.failure.get_or_insert_with(|| for_others.clone());
        let kick = table.kick.clone();
        for (id, route) in table.compilations.drain() {
            if let Route::Attached(waiter) = route {
                let error = if culprit == Some(id) {
                    for_culprit
                } else {
                    for_others
                };
                let _ = deliver(&waiter, &kick, None, Event::Failed(error.clone()));
            }
        }
        for (_, waiter) in table.versions.drain() {
            let _ = deliver(&waiter, &kick, None, Event::Failed(for_others.clone()));
        }
        table.watcher = None;
        table.deputy = None;
        table.parked = 0;
        table.detached = 0;
        table.note_activity();
    }

    /// Refuses new registrations if nothing is in flight; returns whether it
    /// did. Used to close a connection that has been idle long enough.
    pub fn close_if_idle(&self) -> bool {
        let mut table = self.lock();
        if table.in_flight() == 0 {
            table.closing = true;
        }
        table.closing
    }

    /// Refuses new registrations from now on.
    pub fn close(&self) {
        self.lock().closing = true;
    }

    /// Whether the compiler has answered the version handshake.
    pub fn handshake_done(&self) -> bool {
        matches!(self.lock().handshake, Handshake::Done)
    }

    /// Whether new registrations are refused.
    pub fn is_closed(&self) -> bool {
        let table = self.lock();
        table.closing || table.failure.is_some()
    }

    /// The failure of this connection, if it failed.
    pub fn failure(&self) -> Option<HostError> {
        self.lock().failure.clone()
    }

    /// How many compilations and version requests are registered.
    pub fn in_flight(&self) -> usize {
        self.lock().in_flight()
    }

    /// How many compilations the compiler is running or has queued, abandoned
    /// ones included: each holds one of the compiler's slots until it ends.
    pub fn compilations_in_flight(&self) -> usize {
        self.lock().compilations.len()
    }

    /// Since when nothing has been in flight, if nothing is.
    pub fn idle_since(&self) -> Option<Instant> {
        self.lock().idle_since
    }
}

impl Waiter {
    fn new(token: u64, inbox: Sender<Event>, waker: Waker) -> Self {
        Self {
            token,
            inbox,
            waker,
            waiting: Waiting::No,
        }
    }
}

/// The reply to a request of a compilation whose caller has gone, or `Done`
/// for an event or a `CompileResponse`.
pub fn abandoned_reply(compilation_id: u32, message: &outbound_message::Message) -> Routing {
    match error_reply(message, ABANDONED) {
        Some(reply) => Routing::Reply(compilation_id, Box::new(reply)),
        None => Routing::Done,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::protocol::inbound_message;
    use crate::protocol::outbound_message::{
        compile_response, CompileResponse, FunctionCallRequest, LogEvent, VersionResponse,
    };
    use crate::wait::Parker;
    use outbound_message::Message;
    use std::time::Duration;

    fn version(id: u32, protocol: &str) -> Message {
        Message::VersionResponse(VersionResponse {
            id,
            protocol_version: protocol.into(),
            compiler_version: "1.105.0".into(),
            implementation_version: "1.105.0".into(),
            implementation_name: "dart-sass".into(),
        })
    }

    fn success(css: &str) -> Message {
        Message::CompileResponse(CompileResponse {
            result: Some(compile_response::Result::Success(
                compile_response::CompileSuccess {
                    css: css.into(),
                    source_map: String::new(),
                },
            )),
            loaded_urls: vec![],
        })
    }

    fn function_call(id: u32) -> Message {
        Message::FunctionCallRequest(FunctionCallRequest {
            id,
            identifier: Some(outbound_message::function_call_request::Identifier::Name(
                "foo".into(),
            )),
            arguments: vec![],
        })
    }

    /// Routes as a reader that is none of the callers (the background one).
    fn route(dispatcher: &Dispatcher, id: u32, message: Message) -> Routing {
        dispatcher.route(id, message, None)
    }

    fn kick() -> Arc<Kick> {
        Arc::new(Kick::new().unwrap())
    }

    fn waker() -> Waker {
        Waker::native()
    }

    /// Registers a compilation whose caller parks on a parker of its own
    /// (a fiber's if `fiber`, which the test then wakes by hand).
    fn caller(dispatcher: &Dispatcher) -> (Registration, Arc<Parker>) {
        let parker = Arc::new(Parker::default());
        let registration = dispatcher
            .register_compilation(Waker::Native(parker.clone()))
            .unwrap();
        (registration, parker)
    }

    /// Whether `parker` was woken since this was last asked.
    fn woken(parker: &Parker) -> bool {
        let woken = parker.is_unparked();
        parker.park(Some(Duration::ZERO));
        woken
    }

    fn ready() -> Dispatcher {
        let dispatcher = Dispatcher::new(0, kick());
        assert_eq!(route(&dispatcher, 0, version(0, "3.3.0")), Routing::Done);
        dispatcher
    }

    fn css_of(event: Event) -> String {
        match event {
            Event::Message(Message::CompileResponse(CompileResponse {
                result: Some(compile_response::Result::Success(success)),
                ..
            })) => success.css,
            other => panic!("not a success: {other:?}"),
        }
    }

    #[test]
    fn handshake_must_come_first_and_say_protocol_3() {
        let dispatcher = Dispatcher::new(0, kick());
        assert!(matches!(
            route(&dispatcher, 1, success("a")),
            Routing::Violation(message) if message.contains("expected a VersionResponse first")
        ));

        let dispatcher = Dispatcher::new(0, kick());
        assert_eq!(
            route(&dispatcher, 0, version(0, "2.7.1")),
            Routing::Incompatible("2.7.1".into(), "1.105.0".into())
        );

        let dispatcher = Dispatcher::new(0, kick());
        assert_eq!(route(&dispatcher, 0, version(0, "3.3.0")), Routing::Done);
    }

    #[test]
    fn messages_reach_only_their_own_compilation() {
        let dispatcher = ready();
        let a = dispatcher.register_compilation(waker()).unwrap();
        let b = dispatcher.register_compilation(waker()).unwrap();
        assert_ne!(a.id, b.id);
        assert_eq!(route(&dispatcher, b.id, success("b")), Routing::Done);
        assert_eq!(route(&dispatcher, a.id, success("a")), Routing::Done);
        assert_eq!(css_of(a.inbox.try_recv().unwrap()), "a");
        assert_eq!(css_of(b.inbox.try_recv().unwrap()), "b");
        assert!(a.inbox.try_recv().is_err());
        assert_eq!(dispatcher.in_flight(), 0);
    }

    #[test]
    fn ids_skip_reserved_values_and_ids_in_use() {
        let dispatcher = ready();
        dispatcher.lock().next_compilation_id = ERROR_ID - 1;
        let a = dispatcher.register_compilation(waker()).unwrap();
        let b = dispatcher.register_compilation(waker()).unwrap();
        assert_eq!(a.id, ERROR_ID - 1);
        assert_eq!(b.id, 1, "wraps past u32::MAX and 0");
        dispatcher.lock().next_compilation_id = 1;
        let c = dispatcher.register_compilation(waker()).unwrap();
        assert_eq!(c.id, 2, "1 is still in use");
    }

    #[test]
    fn a_detached_compilation_keeps_its_id_until_the_compiler_finishes() {
        let dispatcher = ready();
        let a = dispatcher.register_compilation(waker()).unwrap();
        assert!(dispatcher.detach(a.id, a.token));
        assert!(dispatcher.has_detached());
        drop(a.inbox);

        // Its requests are answered with errors, its events dropped.
        match route(&dispatcher, a.id, function_call(7)) {
            Routing::Reply(id, reply) => {
                assert_eq!(id, a.id);
                let Some(inbound_message::Message::FunctionCallResponse(response)) = reply.message
                else {
                    panic!("not a function call response: {reply:?}");
                };
                assert_eq!(response.id, 7);
                assert_eq!(
                    response.result,
                    Some(inbound_message::function_call_response::Result::Error(
                        ABANDONED.into()
                    ))
                );
            }
            other => panic!("no error reply: {other:?}"),
        }
        assert_eq!(
            route(&dispatcher, a.id, Message::LogEvent(LogEvent::default())),
            Routing::Done
        );

        // The id is not given to anyone else while the compiler runs it.
        dispatcher.lock().next_compilation_id = a.id;
        let b = dispatcher.register_compilation(waker()).unwrap();
        assert_ne!(b.id, a.id);

        // Once it finished, the id is free again.
        assert_eq!(route(&dispatcher, a.id, success("late")), Routing::Done);
        assert!(!dispatcher.has_detached());
        dispatcher.lock().next_compilation_id = a.id;
        let c = dispatcher.register_compilation(waker()).unwrap();
        assert_eq!(c.id, a.id);

        // A stale detach of the old registration does not touch the new one.
        dispatcher.detach(a.id, a.token);
        assert_eq!(route(&dispatcher, c.id, success("c")), Routing::Done);
        assert_eq!(css_of(c.inbox.try_recv().unwrap()), "c");
    }

    #[test]
    fn unknown_compilations_and_misplaced_messages_are_violations() {
        let dispatcher = ready();
        assert!(matches!(
            route(&dispatcher, 42, success("x")),
            Routing::Violation(_)
        ));
        assert!(matches!(
            route(&dispatcher, 0, success("x")),
            Routing::Violation(_)
        ));
        let a = dispatcher.register_compilation(waker()).unwrap();
        assert!(matches!(
            route(&dispatcher, a.id, version(1, "3.3.0")),
            Routing::Violation(_)
        ));
        assert!(matches!(
            route(&dispatcher,
                a.id,
                Message::CompileResponse(CompileResponse::default())
            ),
            Routing::Violation(message) if message.contains("without a result")
        ));
    }

    #[test]
    fn compiler_protocol_errors_are_reported() {
        let dispatcher = ready();
        let routing = route(
            &dispatcher,
            3,
            Message::Error(crate::protocol::ProtocolError {
                r#type: crate::protocol::ProtocolErrorType::Params as i32,
                id: ERROR_ID,
                message: "bad".into(),
            }),
        );
        assert_eq!(
            routing,
            Routing::CompilerError {
                id: 3,
                kind: "PARAMS".into(),
                message: "bad".into()
            }
        );
    }

    #[test]
    fn version_requests_are_routed_by_request_id() {
        let dispatcher = ready();
        let v1 = dispatcher.register_version(waker()).unwrap();
        let v2 = dispatcher.register_version(waker()).unwrap();
        assert_ne!(v1.id, v2.id);
        assert_eq!(
            route(&dispatcher, 0, version(v2.id, "3.3.0")),
            Routing::Done
        );
        assert!(v1.inbox.try_recv().is_err());
        assert!(
            matches!(v2.inbox.try_recv(), Ok(Event::Message(Message::VersionResponse(r))) if r.id == v2.id)
        );
        // Late answers for forgotten requests are dropped.
        dispatcher.forget_version(v1.id, v1.token);
        assert_eq!(
            route(&dispatcher, 0, version(v1.id, "3.3.0")),
            Routing::Done
        );
        assert_eq!(dispatcher.in_flight(), 0);
    }

    #[test]
    fn failure_reaches_every_caller_and_refuses_new_ones() {
        let dispatcher = ready();
        let a = dispatcher.register_compilation(waker()).unwrap();
        let v = dispatcher.register_version(waker()).unwrap();
        let error = HostError::Closed;
        dispatcher.fail(error.clone());
        dispatcher.fail(HostError::Io {
            command: "sass".into(),
            message: "later".into(),
        });
        assert!(matches!(a.inbox.try_recv(), Ok(Event::Failed(e)) if e == error));
        assert!(matches!(v.inbox.try_recv(), Ok(Event::Failed(e)) if e == error));
        assert_eq!(
            dispatcher.register_compilation(waker()).unwrap_err(),
            RegisterError::Failed(error)
        );
    }

    #[test]
    fn closing_when_idle_refuses_new_registrations() {
        let dispatcher = ready();
        let a = dispatcher.register_compilation(waker()).unwrap();
        assert!(dispatcher.idle_since().is_none());
        assert!(!dispatcher.close_if_idle(), "a compilation is in flight");
        assert_eq!(route(&dispatcher, a.id, success("a")), Routing::Done);
        assert!(dispatcher.idle_since().is_some());
        assert!(dispatcher.close_if_idle());
        assert_eq!(
            dispatcher.register_compilation(waker()).unwrap_err(),
            RegisterError::Closing
        );
    }

    fn rung(kick: &Kick) -> bool {
        crate::wait::wait_readable(kick.fds(), Some(Duration::ZERO)).unwrap()
    }

    const WATCH: Role = Role::Watch {
        output_ended: false,
    };

    #[test]
    fn one_waiter_watches_and_the_others_park_until_their_messages_wake_them() {
        let kick = kick();
        let dispatcher = Dispatcher::new(0, kick.clone());
        assert_eq!(route(&dispatcher, 0, version(0, "3.3.0")), Routing::Done);
        let (a, a_parker) = caller(&dispatcher);
        let (b, b_parker) = caller(&dispatcher);
        let (ka, kb) = (Key::Compilation(a.id), Key::Compilation(b.id));

        assert_eq!(dispatcher.wait_on(ka, a.token), WATCH);
        assert_eq!(
            dispatcher.wait_on(kb, b.token),
            Role::Park { deputy: true },
            "a second waiter parks, as the deputy"
        );

        // A message for the parked caller wakes it, not the watcher.
        assert_eq!(route(&dispatcher, b.id, function_call(1)), Routing::Done);
        assert!(woken(&b_parker));
        assert!(!rung(&kick));
        assert_eq!(dispatcher.wait_on(kb, b.token), Role::Ready);
        b.inbox.try_recv().unwrap();
        dispatcher.done_waiting(kb, b.token);
        assert_eq!(dispatcher.wait_on(kb, b.token), Role::Park { deputy: true });

        // A message for the watcher rings the kick.
        assert_eq!(route(&dispatcher, a.id, function_call(2)), Routing::Done);
        assert!(rung(&kick));
        kick.silence();
        a.inbox.try_recv().unwrap();
        assert!(!woken(&a_parker));

        // When the watcher is done waiting, a parked caller is woken to watch.
        dispatcher.done_waiting(ka, a.token);
        assert!(woken(&b_parker));
        assert_eq!(dispatcher.wait_on(kb, b.token), WATCH);
        // ... and the former watcher now parks.
        assert_eq!(dispatcher.wait_on(ka, a.token), Role::Park { deputy: true });

        // A watcher whose compilation another caller finishes keeps the
        // watch until it has woken to its result: nobody else may sleep on
        // the selector beside it, where one could silence the kick rung for
        // the other.
        assert_eq!(
            dispatcher.route(b.id, success("b"), Some(a.token)),
            Routing::Done
        );
        assert!(rung(&kick));
        assert!(
            !woken(&a_parker),
            "nobody takes the watch while b sleeps on it"
        );
        assert_eq!(dispatcher.wait_on(ka, a.token), Role::Park { deputy: true });
        // b wakes to its result and gives up the watch: a is woken to watch.
        kick.silence();
        assert_eq!(dispatcher.wait_on(kb, b.token), Role::Ready);
        assert!(matches!(b.inbox.try_recv(), Ok(Event::Message(_))));
        dispatcher.done_waiting(kb, b.token);
        assert!(woken(&a_parker), "a was woken to take the watch");
        assert_eq!(dispatcher.wait_on(ka, a.token), WATCH);
    }

    #[test]
    fn one_parked_thread_is_the_deputy_and_a_successor_is_woken_when_it_leaves() {
        let dispatcher = ready();
        let (watcher, _) = caller(&dispatcher);
        let fiber = dispatcher
            .register_compilation(Waker::Fiber(crate::wait::park::next_id()))
            .unwrap();
        let (first, first_parker) = caller(&dispatcher);
        let (second, second_parker) = caller(&dispatcher);
        let key = |r: &Registration| Key::Compilation(r.id);
        assert_eq!(dispatcher.wait_on(key(&watcher), watcher.token), WATCH);
        assert_eq!(
            dispatcher.wait_on(key(&fiber), fiber.token),
            Role::Park { deputy: false },
            "a fiber never parks with a timeout"
        );
        assert_eq!(
            dispatcher.wait_on(key(&first), first.token),
            Role::Park { deputy: true }
        );
        assert_eq!(
            dispatcher.wait_on(key(&second), second.token),
            Role::Park { deputy: false },
            "one deputy at a time"
        );
        // The deputy gets its message: the other parked thread is woken to
        // park again as the deputy.
        assert_eq!(
            route(&dispatcher, first.id, function_call(1)),
            Routing::Done
        );
        assert!(woken(&first_parker));
        assert_eq!(dispatcher.wait_on(key(&first), first.token), Role::Ready);
        dispatcher.done_waiting(key(&first), first.token);
        assert!(woken(&second_parker));
        assert_eq!(
            dispatcher.wait_on(key(&second), second.token),
            Role::Park { deputy: true }
        );
    }

    #[test]
    fn the_watch_passes_to_a_thread_rather_than_a_fiber() {
        let dispatcher = ready();
        let (watcher, _) = caller(&dispatcher);
        let fiber = dispatcher
            .register_compilation(Waker::Fiber(crate::wait::park::next_id()))
            .unwrap();
        let (thread, thread_parker) = caller(&dispatcher);
        let key = |r: &Registration| Key::Compilation(r.id);
        assert_eq!(dispatcher.wait_on(key(&watcher), watcher.token), WATCH);
        assert!(matches!(
            dispatcher.wait_on(key(&fiber), fiber.token),
            Role::Park { .. }
        ));
        assert!(matches!(
            dispatcher.wait_on(key(&thread), thread.token),
            Role::Park { .. }
        ));
        assert!(dispatcher.detach(watcher.id, watcher.token));
        assert!(woken(&thread_parker));
        assert_eq!(dispatcher.wait_on(key(&thread), thread.token), WATCH);
    }

    #[test]
    fn a_watcher_that_leaves_unwoken_rings_the_kick_for_whatever_sleeps_for_it() {
        let kick = kick();
        let dispatcher = Dispatcher::new(0, kick.clone());
        assert_eq!(route(&dispatcher, 0, version(0, "3.3.0")), Routing::Done);
        let (a, _) = caller(&dispatcher);
        assert_eq!(dispatcher.wait_on(Key::Compilation(a.id), a.token), WATCH);
        assert!(!rung(&kick));
        assert!(dispatcher.detach(a.id, a.token));
        assert!(rung(&kick));
    }

    #[test]
    fn a_queued_wake_from_the_background_rings_the_kick_and_one_from_a_caller_does_not() {
        let kick = kick();
        let dispatcher = Dispatcher::new(0, kick.clone());
        assert_eq!(route(&dispatcher, 0, version(0, "3.3.0")), Routing::Done);
        let (watcher, _) = caller(&dispatcher);
        let id = crate::wait::park::next_id();
        let parked = dispatcher.register_compilation(Waker::Thread(id)).unwrap();
        let kw = Key::Compilation(watcher.id);
        let kp = Key::Compilation(parked.id);
        assert_eq!(dispatcher.wait_on(kw, watcher.token), WATCH);
        assert!(matches!(
            dispatcher.wait_on(kp, parked.token),
            Role::Park { .. }
        ));

        // Routed by a caller (the watcher, reading): queued, no kick (the
        // caller takes the queue on its way back to its runtime).
        assert_eq!(
            dispatcher.route(parked.id, function_call(1), Some(watcher.token)),
            Routing::Done
        );
        assert!(!rung(&kick));
        parked.inbox.try_recv().unwrap();
        dispatcher.done_waiting(kp, parked.token);
        assert!(matches!(
            dispatcher.wait_on(kp, parked.token),
            Role::Park { .. }
        ));

        // Routed by the background reader: queued, and the watcher kicked
        // so that it takes the queue.
        assert_eq!(
            route(&dispatcher, parked.id, function_call(2)),
            Routing::Done
        );
        assert!(rung(&kick));
        let queued = crate::wait::park::take().unwrap_or_default();
        assert_eq!(queued.iter().filter(|&&queued| queued == id).count(), 2);
    }

    #[test]
    fn a_watcher_finished_by_another_reader_keeps_the_watch_until_it_leaves() {
        let dispatcher = ready();
        let watcher = dispatcher.register_compilation(waker()).unwrap();
        let other = dispatcher.register_compilation(waker()).unwrap();
        let query = dispatcher.register_version(waker()).unwrap();
        let (kw, ko, kv) = (
            Key::Compilation(watcher.id),
            Key::Compilation(other.id),
            Key::Version(query.id),
        );
        assert_eq!(dispatcher.wait_on(kw, watcher.token), WATCH);
        // `other` reads and routes the watcher's result while it sleeps.
        assert_eq!(
            dispatcher.route(watcher.id, success("w"), Some(other.token)),
            Routing::Done
        );
        assert!(
            matches!(dispatcher.wait_on(ko, other.token), Role::Park { .. }),
            "the watch stays with the caller asleep on the selector"
        );
        // Leaving without looking (an interrupted caller drops its
        // compilation) gives the watch up as well.
        assert!(!dispatcher.detach(watcher.id, watcher.token));
        assert_eq!(dispatcher.wait_on(ko, other.token), WATCH);

        // The same for a version request's waiter.
        assert!(matches!(
            dispatcher.wait_on(kv, query.token),
            Role::Park { .. }
        ));
        dispatcher.done_waiting(ko, other.token);
        assert_eq!(dispatcher.wait_on(kv, query.token), WATCH);
        assert_eq!(
            dispatcher.route(0, version(query.id, "3.3.0"), Some(other.token)),
            Routing::Done
        );
        assert!(matches!(
            dispatcher.wait_on(ko, other.token),
            Role::Park { .. }
        ));
        dispatcher.forget_version(query.id, query.token);
        assert_eq!(dispatcher.wait_on(ko, other.token), WATCH);
    }

    #[test]
    fn once_reading_ended_the_watcher_watches_the_kick_through_which_the_failure_comes() {
        let kick = kick();
        let dispatcher = Dispatcher::new(0, kick.clone());
        assert_eq!(route(&dispatcher, 0, version(0, "3.3.0")), Routing::Done);
        let (a, _) = caller(&dispatcher);
        let (b, b_parker) = caller(&dispatcher);
        let (ka, kb) = (Key::Compilation(a.id), Key::Compilation(b.id));
        assert_eq!(dispatcher.wait_on(ka, a.token), WATCH);
        assert!(matches!(dispatcher.wait_on(kb, b.token), Role::Park { .. }));
        dispatcher.set_reading_ended();
        assert!(rung(&kick), "the watcher is woken to watch the kick alone");
        kick.silence();
        assert_eq!(
            dispatcher.wait_on(ka, a.token),
            Role::Watch { output_ended: true }
        );
        dispatcher.fail(HostError::Closed);
        assert!(rung(&kick));
        assert!(woken(&b_parker));
        for inbox in [&a.inbox, &b.inbox] {
            assert!(matches!(
                inbox.try_recv(),
                Ok(Event::Failed(HostError::Closed))
            ));
        }
    }

    #[test]
    fn a_culprit_gets_its_own_error_and_bystanders_another() {
        let dispatcher = ready();
        let culprit = dispatcher.register_compilation(waker()).unwrap();
        let bystander = dispatcher.register_compilation(waker()).unwrap();
        let failed = HostError::CompilerFailed {
            command: "sass".into(),
            kind: "INTERNAL".into(),
            message: "Stack Overflow".into(),
        };
        let stopped = HostError::StoppedByOther {
            command: "sass".into(),
            culprit: culprit.id,
            message: "Stack Overflow".into(),
        };
        dispatcher.fail_with(Failure::Culprit {
            id: culprit.id,
            culprit: failed.clone(),
            bystander: stopped.clone(),
        });
        assert!(matches!(culprit.inbox.try_recv(), Ok(Event::Failed(e)) if e == failed));
        assert!(matches!(bystander.inbox.try_recv(), Ok(Event::Failed(e)) if e == stopped));
        assert!(stopped.is_retryable() && !failed.is_retryable());
    }
}
