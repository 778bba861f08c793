//! Routing by compilation id: the table that says, for every message the
//! compiler sends, which waiting caller gets it.
//!
//! Each compilation registers a channel under a fresh compilation id; the
//! reader hands each decoded message to [`Dispatcher::route`], which sends it
//! straight to that channel. An id stays taken until the compiler has sent the
//! compilation's `CompileResponse`, even if the caller gave up (was
//! interrupted) long before: such a compilation is *detached*, and requests
//! the compiler still sends for it are answered with errors here, so the
//! compiler can finish it. Version requests live on compilation id 0 and are
//! routed by their request id.
//!
//! Nothing here does I/O: the connection feeds it messages and writes the
//! replies it returns, so the routing rules are tested without a compiler.

use std::collections::HashMap;
use std::sync::{Mutex, MutexGuard, PoisonError};
use std::time::Instant;

use crossbeam_channel::{Receiver, Sender};

use crate::error::HostError;
use crate::protocol::{
    inbound_message, major_version, outbound_message, InboundMessage, ERROR_ID, PROTOCOL_MAJOR,
    VERSION_COMPILATION_ID,
};

/// What a waiting caller receives.
#[derive(Debug)]
pub enum Event {
    /// A message from the compiler for this caller.
    Message(outbound_message::Message),
    /// The connection failed; no more messages will come.
    Failed(HostError),
    /// Sent by a [`Waker`]: the caller should check for interrupts.
    Wake,
}

/// Wakes a caller blocked on its channel (used as Ruby's unblocking
/// function); in the wait_for mode also the `poll` the caller reads in.
#[derive(Clone, Debug)]
pub struct Waker {
    inbox: Sender<Event>,
    poll: Option<std::sync::Arc<mio::Waker>>,
}

impl Waker {
    fn new(inbox: Sender<Event>) -> Self {
        Self { inbox, poll: None }
    }

    /// The same waker, also waking `poll`.
    pub(crate) fn with_poll(mut self, poll: std::sync::Arc<mio::Waker>) -> Self {
        self.poll = Some(poll);
        self
    }

    /// Makes the caller's blocking receive return [`Event::Wake`].
    pub fn wake(&self) {
        // The receiver may already be gone; then there is nobody to wake.
        let _ = self.inbox.send(Event::Wake);
        if let Some(poll) = &self.poll {
            let _ = poll.wake();
        }
    }
}

/// A caller's registration: its ids, its channel, and a waker for it.
#[derive(Debug)]
pub struct Registration {
    /// The compilation id (or, for version requests, the request id).
    pub id: u32,
    /// Distinguishes this registration from a later one that reuses the id.
    pub token: u64,
    /// Where this caller's messages arrive.
    pub inbox: Receiver<Event>,
    /// Wakes this caller.
    pub waker: Waker,
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
    /// The compiler reported a protocol error of its own.
    CompilerError(String),
    /// The compiler speaks another major protocol version: (protocol version,
    /// compiler version).
    Incompatible(String, String),
}

#[derive(Debug)]
enum Route {
    Attached { token: u64, inbox: Sender<Event> },
    Detached { token: u64 },
}

impl Route {
    fn token(&self) -> u64 {
        match self {
            Self::Attached { token, .. } | Self::Detached { token } => *token,
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
    versions: HashMap<u32, Sender<Event>>,
    next_compilation_id: u32,
    next_version_id: u32,
    next_token: u64,
    handshake: Handshake,
    failure: Option<HostError>,
    closing: bool,
    idle_since: Option<Instant>,
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
    /// protocol 3, nothing else is routed.
    pub fn new(handshake_id: u32) -> Self {
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
            }),
        }
    }

    fn lock(&self) -> MutexGuard<'_, Table> {
        // A panic while holding the lock cannot leave the table half-updated
        // in a way that matters more than losing the connection would.
        self.table.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Takes a free compilation id and registers a channel for it.
    pub fn register_compilation(&self) -> Result<Registration, RegisterError> {
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
        table.compilations.insert(
            id,
            Route::Attached {
                token,
                inbox: sender.clone(),
            },
        );
        table.note_activity();
        Ok(Registration {
            id,
            token,
            inbox,
            waker: Waker::new(sender),
        })
    }

    /// Registers a channel for a `VersionRequest` and returns its request id.
    pub fn register_version(&self) -> Result<Registration, RegisterError> {
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
        table.versions.insert(id, sender.clone());
        table.note_activity();
        Ok(Registration {
            id,
            token,
            inbox,
            waker: Waker::new(sender),
        })
    }

    /// The caller of compilation `id` has gone. The id stays taken until the
    /// compiler finishes the compilation; until then its requests are
    /// answered with errors. Does nothing if `token` does not match (the
    /// compilation is already over and the id may belong to another one).
    pub fn detach(&self, id: u32, token: u64) {
        let mut table = self.lock();
        if let Some(route) = table.compilations.get_mut(&id) {
            if route.token() == token {
                *route = Route::Detached { token };
            }
        }
    }

    /// The caller of version request `id` has gone.
    pub fn forget_version(&self, id: u32) {
        let mut table = self.lock();
        table.versions.remove(&id);
        table.note_activity();
    }

    /// Routes one message the compiler sent under `compilation_id`.
    pub fn route(&self, compilation_id: u32, message: outbound_message::Message) -> Routing {
        use outbound_message::Message;

        let mut table = self.lock();
        if let Message::Error(error) = &message {
            let kind = crate::protocol::ProtocolErrorType::try_from(error.r#type)
                .map(|kind| kind.as_str_name().to_owned())
                .unwrap_or_else(|_| format!("type {}", error.r#type));
            return Routing::CompilerError(format!(
                "the compiler reported a protocol error ({kind}) for compilation {compilation_id}, \
                 request {}: {}",
                error.id, error.message
            ));
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
                    if let Some(inbox) = table.versions.remove(&response.id) {
                        table.note_activity();
                        let _ = inbox.send(Event::Message(Message::VersionResponse(response)));
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
            Route::Attached { inbox, .. } => {
                // If the receiver is gone its owner is detaching right now;
                // the drop of the handle answers what it had queued.
                if let Err(crossbeam_channel::SendError(Event::Message(message))) =
                    inbox.send(Event::Message(message))
                {
                    abandoned_reply(compilation_id, &message)
                } else {
                    Routing::Done
                }
            }
            Route::Detached { .. } => abandoned_reply(compilation_id, &message),
        };
        if finished {
            table.compilations.remove(&compilation_id);
            table.note_activity();
        }
        routing
    }

    /// Fails every registered caller with `error` and refuses new ones. The
    /// first failure is the one callers see.
    pub fn fail(&self, error: HostError) {
        let mut table = self.lock();
        let error = table.failure.get_or_insert(error).clone();
        for (_, route) in table.compilations.drain() {
            if let Route::Attached { inbox, .. } = route {
                let _ = inbox.send(Event::Failed(error.clone()));
            }
        }
        for (_, inbox) in table.versions.drain() {
            let _ = inbox.send(Event::Failed(error.clone()));
        }
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

/// The reply to a request of a compilation whose caller has gone, or `Done`
/// for an event or a `CompileResponse`.
pub fn abandoned_reply(compilation_id: u32, message: &outbound_message::Message) -> Routing {
    match error_reply(message, ABANDONED) {
        Some(reply) => Routing::Reply(compilation_id, Box::new(reply)),
        None => Routing::Done,
    }
}

/// A request of the compiler that the host owes an answer to: its kind and
/// its request id.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Request {
    /// A `CanonicalizeRequest`.
    Canonicalize(u32),
    /// An `ImportRequest`.
    Import(u32),
    /// A `FileImportRequest`.
    FileImport(u32),
    /// A `FunctionCallRequest`.
    FunctionCall(u32),
}

impl Request {
    /// The request `message` is, if it is one.
    pub fn of(message: &outbound_message::Message) -> Option<Self> {
        use outbound_message::Message;
        Some(match message {
            Message::CanonicalizeRequest(r) => Self::Canonicalize(r.id),
            Message::ImportRequest(r) => Self::Import(r.id),
            Message::FileImportRequest(r) => Self::FileImport(r.id),
            Message::FunctionCallRequest(r) => Self::FunctionCall(r.id),
            _ => return None,
        })
    }

    /// The request `message` answers, if it is a response.
    pub fn answered_by(message: &inbound_message::Message) -> Option<Self> {
        use inbound_message::Message;
        Some(match message {
            Message::CanonicalizeResponse(r) => Self::Canonicalize(r.id),
            Message::ImportResponse(r) => Self::Import(r.id),
            Message::FileImportResponse(r) => Self::FileImport(r.id),
            Message::FunctionCallResponse(r) => Self::FunctionCall(r.id),
            _ => return None,
        })
    }

    /// The response that tells the compiler this request failed with
    /// `error`.
    pub fn error_response(self, error: String) -> inbound_message::Message {
        use inbound_message as inbound;
        match self {
            Self::Canonicalize(id) => {
                inbound::Message::CanonicalizeResponse(inbound::CanonicalizeResponse {
                    id,
                    result: Some(inbound::canonicalize_response::Result::Error(error)),
                    containing_url_unused: false,
                })
            }
            Self::Import(id) => inbound::Message::ImportResponse(inbound::ImportResponse {
                id,
                result: Some(inbound::import_response::Result::Error(error)),
            }),
            Self::FileImport(id) => {
                inbound::Message::FileImportResponse(inbound::FileImportResponse {
                    id,
                    result: Some(inbound::file_import_response::Result::Error(error)),
                    containing_url_unused: false,
                })
            }
            Self::FunctionCall(id) => {
                inbound::Message::FunctionCallResponse(inbound::FunctionCallResponse {
                    id,
                    result: Some(inbound::function_call_response::Result::Error(error)),
                    accessed_argument_lists: Vec::new(),
                })
            }
        }
    }
}

/// An error response to `message` if it is a request, else `None`.
pub fn error_reply(message: &outbound_message::Message, error: &str) -> Option<InboundMessage> {
    Request::of(message).map(|request| InboundMessage {
        message: Some(request.error_response(error.to_owned())),
    })
}

/// Checks the parts of a compilation's message that the protocol makes
/// mandatory and that the host relies on.
fn check_message(message: &outbound_message::Message) -> Option<String> {
    use outbound_message::Message;
    match message {
        Message::CompileResponse(response) if response.result.is_none() => {
            Some("CompileResponse without a result".to_owned())
        }
        Message::FunctionCallRequest(request) if request.identifier.is_none() => {
            Some("FunctionCallRequest without a function name or id".to_owned())
        }
        Message::VersionResponse(_) => {
            Some("VersionResponse sent with a compilation's id".to_owned())
        }
        _ => None,
    }
}

/// The protobuf name of a message, for error messages.
pub fn message_name(message: &outbound_message::Message) -> &'static str {
    use outbound_message::Message;
    match message {
        Message::Error(_) => "ProtocolError",
        Message::CompileResponse(_) => "CompileResponse",
        Message::LogEvent(_) => "LogEvent",
        Message::CanonicalizeRequest(_) => "CanonicalizeRequest",
        Message::ImportRequest(_) => "ImportRequest",
        Message::FileImportRequest(_) => "FileImportRequest",
        Message::FunctionCallRequest(_) => "FunctionCallRequest",
        Message::VersionResponse(_) => "VersionResponse",
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::protocol::outbound_message::{
        compile_response, CompileResponse, FunctionCallRequest, LogEvent, VersionResponse,
    };
    use outbound_message::Message;

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

    fn ready() -> Dispatcher {
        let dispatcher = Dispatcher::new(0);
        assert_eq!(dispatcher.route(0, version(0, "3.3.0")), Routing::Done);
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
        let dispatcher = Dispatcher::new(0);
        assert!(matches!(
            dispatcher.route(1, success("a")),
            Routing::Violation(message) if message.contains("expected a VersionResponse first")
        ));

        let dispatcher = Dispatcher::new(0);
        assert_eq!(
            dispatcher.route(0, version(0, "2.7.1")),
            Routing::Incompatible("2.7.1".into(), "1.105.0".into())
        );

        let dispatcher = Dispatcher::new(0);
        assert_eq!(dispatcher.route(0, version(0, "3.3.0")), Routing::Done);
    }

    #[test]
    fn messages_reach_only_their_own_compilation() {
        let dispatcher = ready();
        let a = dispatcher.register_compilation().unwrap();
        let b = dispatcher.register_compilation().unwrap();
        assert_ne!(a.id, b.id);
        assert_eq!(dispatcher.route(b.id, success("b")), Routing::Done);
        assert_eq!(dispatcher.route(a.id, success("a")), Routing::Done);
        assert_eq!(css_of(a.inbox.try_recv().unwrap()), "a");
        assert_eq!(css_of(b.inbox.try_recv().unwrap()), "b");
        assert!(a.inbox.try_recv().is_err());
        assert_eq!(dispatcher.in_flight(), 0);
    }

    #[test]
    fn ids_skip_reserved_values_and_ids_in_use() {
        let dispatcher = ready();
        dispatcher.lock().next_compilation_id = ERROR_ID - 1;
        let a = dispatcher.register_compilation().unwrap();
        let b = dispatcher.register_compilation().unwrap();
        assert_eq!(a.id, ERROR_ID - 1);
        assert_eq!(b.id, 1, "wraps past u32::MAX and 0");
        dispatcher.lock().next_compilation_id = 1;
        let c = dispatcher.register_compilation().unwrap();
        assert_eq!(c.id, 2, "1 is still in use");
    }

    #[test]
    fn a_detached_compilation_keeps_its_id_until_the_compiler_finishes() {
        let dispatcher = ready();
        let a = dispatcher.register_compilation().unwrap();
        dispatcher.detach(a.id, a.token);
        drop(a.inbox);

        // Its requests are answered with errors, its events dropped.
        match dispatcher.route(a.id, function_call(7)) {
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
            dispatcher.route(a.id, Message::LogEvent(LogEvent::default())),
            Routing::Done
        );

        // The id is not given to anyone else while the compiler runs it.
        dispatcher.lock().next_compilation_id = a.id;
        let b = dispatcher.register_compilation().unwrap();
        assert_ne!(b.id, a.id);

        // Once it finished, the id is free again.
        assert_eq!(dispatcher.route(a.id, success("late")), Routing::Done);
        dispatcher.lock().next_compilation_id = a.id;
        let c = dispatcher.register_compilation().unwrap();
        assert_eq!(c.id, a.id);

        // A stale detach of the old registration does not touch the new one.
        dispatcher.detach(a.id, a.token);
        assert_eq!(dispatcher.route(c.id, success("c")), Routing::Done);
        assert_eq!(css_of(c.inbox.try_recv().unwrap()), "c");
    }

    #[test]
    fn unknown_compilations_and_misplaced_messages_are_violations() {
        let dispatcher = ready();
        assert!(matches!(
            dispatcher.route(42, success("x")),
            Routing::Violation(_)
        ));
        assert!(matches!(
            dispatcher.route(0, success("x")),
            Routing::Violation(_)
        ));
        let a = dispatcher.register_compilation().unwrap();
        assert!(matches!(
            dispatcher.route(a.id, version(1, "3.3.0")),
            Routing::Violation(_)
        ));
        assert!(matches!(
            dispatcher.route(
                a.id,
                Message::CompileResponse(CompileResponse::default())
            ),
            Routing::Violation(message) if message.contains("without a result")
        ));
    }

    #[test]
    fn compiler_protocol_errors_are_reported() {
        let dispatcher = ready();
        let routing = dispatcher.route(
            3,
            Message::Error(crate::protocol::ProtocolError {
                r#type: crate::protocol::ProtocolErrorType::Params as i32,
                id: ERROR_ID,
                message: "bad".into(),
            }),
        );
        assert!(matches!(
            routing,
            Routing::CompilerError(message) if message.contains("(PARAMS)") && message.ends_with(": bad")
        ));
    }

    #[test]
    fn version_requests_are_routed_by_request_id() {
        let dispatcher = ready();
        let v1 = dispatcher.register_version().unwrap();
        let v2 = dispatcher.register_version().unwrap();
        assert_ne!(v1.id, v2.id);
        assert_eq!(dispatcher.route(0, version(v2.id, "3.3.0")), Routing::Done);
        assert!(v1.inbox.try_recv().is_err());
        assert!(
            matches!(v2.inbox.try_recv(), Ok(Event::Message(Message::VersionResponse(r))) if r.id == v2.id)
        );
        // Late answers for forgotten requests are dropped.
        dispatcher.forget_version(v1.id);
        assert_eq!(dispatcher.route(0, version(v1.id, "3.3.0")), Routing::Done);
        assert_eq!(dispatcher.in_flight(), 0);
    }

    #[test]
    fn failure_reaches_every_caller_and_refuses_new_ones() {
        let dispatcher = ready();
        let a = dispatcher.register_compilation().unwrap();
        let v = dispatcher.register_version().unwrap();
        let error = HostError::Closed;
        dispatcher.fail(error.clone());
        dispatcher.fail(HostError::Io {
            command: "sass".into(),
            message: "later".into(),
        });
        assert!(matches!(a.inbox.try_recv(), Ok(Event::Failed(e)) if e == error));
        assert!(matches!(v.inbox.try_recv(), Ok(Event::Failed(e)) if e == error));
        assert_eq!(
            dispatcher.register_compilation().unwrap_err(),
            RegisterError::Failed(error)
        );
    }

    #[test]
    fn closing_when_idle_refuses_new_registrations() {
        let dispatcher = ready();
        let a = dispatcher.register_compilation().unwrap();
        assert!(dispatcher.idle_since().is_none());
        assert!(!dispatcher.close_if_idle(), "a compilation is in flight");
        assert_eq!(dispatcher.route(a.id, success("a")), Routing::Done);
        assert!(dispatcher.idle_since().is_some());
        assert!(dispatcher.close_if_idle());
        assert_eq!(
            dispatcher.register_compilation().unwrap_err(),
            RegisterError::Closing
        );
    }

    #[test]
    fn waker_interrupts_a_blocked_receive() {
        let dispatcher = ready();
        let a = dispatcher.register_compilation().unwrap();
        let waker = a.waker.clone();
        let thread = std::thread::spawn(move || waker.wake());
        assert!(matches!(a.inbox.recv(), Ok(Event::Wake)));
        thread.join().unwrap();
    }
}
