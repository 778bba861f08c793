//! The requests a compiler sends a compilation that the host owes answers
//! to (calls of importers and functions), the error answers that end them
//! when nobody else will, and the checks and names of the messages the
//! table routes.

use crate::protocol::{inbound_message, outbound_message, InboundMessage};

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
pub(super) fn check_message(message: &outbound_message::Message) -> Option<String> {
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
