//! The compiler's messages decoded, and nested values dropped, with no
//! machine stack per level of nesting.
//!
//! A `Value` the compiler sends nests as deeply as the Sass that made it (a
//! list of lists a thousand levels deep is one function argument). prost
//! decodes a message by recursing once per level, and so does the drop glue
//! of the types it generates. Whoever reads the compiler's output decodes it
//! (any caller, a Ruby fiber with a small stack among them), so one deep
//! argument overflowed that caller's stack: Ruby turns the fault into a
//! `SystemStackError` and longjmps over every Rust frame in between, the
//! reader's turn and the dispatcher's state with them, and every later
//! compile of the process hung.
//!
//! So [`decode_outbound`] walks the only message that carries values
//! (`FunctionCallRequest`, whose arguments are values) with a work stack on
//! the heap: each container (list, map and its entries, argument list and its
//! keywords, calculation and its operands) is a frame of that stack, and only
//! messages that cannot nest (a string, a number, a color) are handed to
//! prost. Every other message has no recursive field and is prost's. The
//! `Drop` impls below take a value's children apart into a heap list before
//! they are dropped, so no drop recurses either.

use std::fmt;

use bytes::Bytes;
use prost::Message;

use super::generated::{
    outbound_message::{self, function_call_request::Identifier, FunctionCallRequest},
    value::{
        self,
        calculation::{calculation_value, CalculationOperation, CalculationValue},
        map::Entry,
    },
    OutboundMessage, Value,
};

/// A message the compiler sent that is not valid protobuf for the schema.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DecodeError(String);

impl fmt::Display for DecodeError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for DecodeError {}

impl From<prost::DecodeError> for DecodeError {
    fn from(error: prost::DecodeError) -> Self {
        Self(error.to_string())
    }
}

fn invalid(what: &str) -> DecodeError {
    DecodeError(format!("failed to decode Protobuf message: {what}"))
}

const VARINT: u8 = 0;
const FIXED64: u8 = 1;
const LENGTH_DELIMITED: u8 = 2;
const FIXED32: u8 = 5;

/// `OutboundMessage.function_call_request`'s field number.
const FUNCTION_CALL_REQUEST: u32 = 7;

/// Decodes one `OutboundMessage`, as `prost::Message::decode` would, with no
/// machine stack per level of the values it carries.
pub fn decode_outbound(payload: Bytes) -> Result<OutboundMessage, DecodeError> {
    let buf = &payload[..];
    let mut message = OutboundMessage::default();
    let mut wire = Wire { buf, pos: 0 };
    while wire.pos < buf.len() {
        let start = wire.pos;
        let (field, wire_type) = wire.key(buf.len())?;
        if field == FUNCTION_CALL_REQUEST && wire_type == LENGTH_DELIMITED {
            let end = wire.length(buf.len())?;
            // A oneof field seen again merges into what it holds; another
            // field of the oneof replaces it.
            let mut request = match message.message.take() {
                Some(outbound_message::Message::FunctionCallRequest(request)) => request,
                _ => FunctionCallRequest::default(),
            };
            merge_function_call(&mut request, buf, wire.pos, end)?;
            wire.pos = end;
            message.message = Some(outbound_message::Message::FunctionCallRequest(request));
        } else {
            // Any other field (none of them nests) is prost's, merged as it
            // would merge it.
            wire.skip(wire_type, buf.len())?;
            message.merge(&buf[start..wire.pos])?;
        }
    }
    Ok(message)
}

/// Reads protobuf's wire format from `buf`, never past a given end.
struct Wire<'a> {
    buf: &'a [u8],
    pos: usize,
}

impl Wire<'_> {
    fn varint(&mut self, end: usize) -> Result<u64, DecodeError> {
        let mut value = 0u64;
        for shift in (0..70).step_by(7) {
            if self.pos >= end {
                return Err(invalid("buffer underflow"));
            }
            let byte = self.buf[self.pos];
            self.pos += 1;
            if shift == 63 && byte > 1 {
                return Err(invalid("invalid varint"));
            }
            value |= u64::from(byte & 0x7f) << shift;
            if byte < 0x80 {
                return Ok(value);
            }
        }
        Err(invalid("invalid varint"))
    }

    fn key(&mut self, end: usize) -> Result<(u32, u8), DecodeError> {
        let key = self.varint(end)?;
        let wire_type = (key & 7) as u8;
        let field = key >> 3;
        if key > u64::from(u32::MAX) || field == 0 {
            return Err(invalid(&format!("invalid key value: {key}")));
        }
        Ok((field as u32, wire_type))
    }

    /// Reads a length and returns where the field it prefixes ends.
    fn length(&mut self, end: usize) -> Result<usize, DecodeError> {
        let length = self.varint(end)?;
        match usize::try_from(length)
            .ok()
            .and_then(|l| self.pos.checked_add(l))
        {
            Some(field_end) if field_end <= end => Ok(field_end),
            _ => Err(invalid("buffer underflow")),
        }
    }

    fn bytes(&mut self, end: usize) -> Result<&[u8], DecodeError> {
        let field_end = self.length(end)?;
        let bytes = &self.buf[self.pos..field_end];
        self.pos = field_end;
        Ok(bytes)
    }

    fn string(&mut self, end: usize) -> Result<String, DecodeError> {
        let bytes = self.bytes(end)?;
        String::from_utf8(bytes.to_vec())
            .map_err(|_| invalid("invalid string value: data is not UTF-8 encoded"))
    }

    fn skip(&mut self, wire_type: u8, end: usize) -> Result<(), DecodeError> {
        let field_end = match wire_type {
            VARINT => return self.varint(end).map(drop),
            FIXED64 => self.pos + 8,
            FIXED32 => self.pos + 4,
            LENGTH_DELIMITED => self.length(end)?,
            // Groups were deprecated before proto3: the schema has none.
            other => return Err(invalid(&format!("unsupported wire type: {other}"))),
        };
        if field_end > end {
            return Err(invalid("buffer underflow"));
        }
        self.pos = field_end;
        Ok(())
    }
}

fn expect(wire_type: u8, expected: u8) -> Result<(), DecodeError> {
    if wire_type == expected {
        Ok(())
    } else {
        Err(invalid(&format!(
            "invalid wire type: {wire_type} (expected {expected})"
        )))
    }
}

fn merge_function_call(
    request: &mut FunctionCallRequest,
    buf: &[u8],
    start: usize,
    end: usize,
) -> Result<(), DecodeError> {
    let mut wire = Wire { buf, pos: start };
    while wire.pos < end {
        let (field, wire_type) = wire.key(end)?;
        match field {
            1 => {
                expect(wire_type, VARINT)?;
                request.id = wire.varint(end)? as u32;
            }
            3 => {
                expect(wire_type, LENGTH_DELIMITED)?;
                request.identifier = Some(Identifier::Name(wire.string(end)?));
            }
            4 => {
                expect(wire_type, VARINT)?;
                request.identifier = Some(Identifier::FunctionId(wire.varint(end)? as u32));
            }
            5 => {
                expect(wire_type, LENGTH_DELIMITED)?;
                let value_end = wire.length(end)?;
                request
                    .arguments
                    .push(decode_value(buf, wire.pos, value_end)?);
                wire.pos = value_end;
            }
            _ => wire.skip(wire_type, end)?,
        }
    }
    Ok(())
}

/// A message being decoded that can hold a nested one.
enum Node {
    Value(Value),
    List(value::List),
    Map(value::Map),
    Entry(Entry),
    ArgumentList(value::ArgumentList),
    /// An entry of `ArgumentList.keywords`.
    Keyword(String, Option<Value>),
    Calculation(value::Calculation),
    CalculationValue(CalculationValue),
    Operation(CalculationOperation),
}

/// A node of the work stack: the message, where its bytes end, and which
/// field of its parent it fills.
struct Frame {
    node: Node,
    end: usize,
    field: u32,
}

/// Decodes the `Value` in `buf[start..end]` depth first, with its open
/// containers on a work stack on the heap.
fn decode_value(buf: &[u8], start: usize, end: usize) -> Result<Value, DecodeError> {
    let mut stack = vec![Frame {
        node: Node::Value(Value::default()),
        end,
        field: 0,
    }];
    let mut wire = Wire { buf, pos: start };
    loop {
        let top = stack.last_mut().expect("the root frame leaves last");
        if wire.pos == top.end {
            let done = stack.pop().expect("a frame is on the stack");
            match stack.last_mut() {
                Some(parent) => attach(&mut parent.node, done.field, done.node),
                None => match done.node {
                    Node::Value(value) => return Ok(value),
                    _ => unreachable!("the root frame is a Value"),
                },
            }
            continue;
        }
        let (field, wire_type) = wire.key(top.end)?;
        let frame_end = top.end;
        if let Some(child) = field_of(&mut top.node, field, wire_type, &mut wire, frame_end)? {
            let child_end = wire.length(frame_end)?;
            stack.push(Frame {
                node: child,
                end: child_end,
                field,
            });
        }
    }
}

/// Reads one field of `node`. A field that holds a container is not read:
/// the container is returned (holding what the field held, if a message
/// field seen again merges into it), for its length and bytes to be read
/// next as a frame of its own.
fn field_of(
    node: &mut Node,
    field: u32,
    wire_type: u8,
    wire: &mut Wire<'_>,
    end: usize,
) -> Result<Option<Node>, DecodeError> {
    use value::Value as V;
    // A message field: a length follows, then the message.
    let open = |node: Node| -> Result<Option<Node>, DecodeError> {
        expect(wire_type, LENGTH_DELIMITED)?;
        Ok(Some(node))
    };
    match (node, field) {
        (Node::Value(value), _) => {
            let current = value.value.take();
            let child = match (field, current) {
                (5, Some(V::List(list))) => Node::List(list),
                (5, _) => Node::List(Default::default()),
                (6, Some(V::Map(map))) => Node::Map(map),
                (6, _) => Node::Map(Default::default()),
                (10, Some(V::ArgumentList(list))) => Node::ArgumentList(list),
                (10, _) => Node::ArgumentList(Default::default()),
                (12, Some(V::Calculation(calculation))) => Node::Calculation(calculation),
                (12, _) => Node::Calculation(Default::default()),
                (field, current) => {
                    value.value = leaf_value(field, wire_type, current, wire, end)?;
                    return Ok(None);
                }
            };
            open(child)
        }
        (Node::List(list), 1) => varint_into(wire, wire_type, end, |v| list.separator = v as i32),
        (Node::List(list), 2) => varint_into(wire, wire_type, end, |v| list.has_brackets = v != 0),
        (Node::List(_), 3) => open(Node::Value(Value::default())),
        (Node::Map(_), 1) => open(Node::Entry(Entry::default())),
        (Node::Entry(entry), 1) => open(Node::Value(entry.key.take().unwrap_or_default())),
        (Node::Entry(entry), 2) => open(Node::Value(entry.value.take().unwrap_or_default())),
        (Node::ArgumentList(list), 1) => varint_into(wire, wire_type, end, |v| list.id = v as u32),
        (Node::ArgumentList(list), 2) => {
            varint_into(wire, wire_type, end, |v| list.separator = v as i32)
        }
        (Node::ArgumentList(_), 3) => open(Node::Value(Value::default())),
        (Node::ArgumentList(_), 4) => open(Node::Keyword(String::new(), None)),
        (Node::Keyword(key, _), 1) => {
            expect(wire_type, LENGTH_DELIMITED)?;
            *key = wire.string(end)?;
            Ok(None)
        }
        (Node::Keyword(_, value), 2) => open(Node::Value(value.take().unwrap_or_default())),
        (Node::Calculation(calculation), 1) => {
            expect(wire_type, LENGTH_DELIMITED)?;
            calculation.name = wire.string(end)?;
            Ok(None)
        }
        (Node::Calculation(_), 2) => open(Node::CalculationValue(CalculationValue::default())),
        (Node::CalculationValue(value), _) => {
            use calculation_value::Value as C;
            let current = value.value.take();
            let child = match (field, current) {
                (4, Some(C::Operation(operation))) => Node::Operation(*operation),
                (4, _) => Node::Operation(Default::default()),
                (5, Some(C::Calculation(calculation))) => Node::Calculation(calculation),
                (5, _) => Node::Calculation(Default::default()),
                (1, current) => {
                    expect(wire_type, LENGTH_DELIMITED)?;
                    let mut number = match current {
                        Some(C::Number(number)) => number,
                        _ => Default::default(),
                    };
                    number.merge(wire.bytes(end)?)?;
                    value.value = Some(C::Number(number));
                    return Ok(None);
                }
                (2 | 3, _) => {
                    expect(wire_type, LENGTH_DELIMITED)?;
                    let text = wire.string(end)?;
                    value.value = Some(if field == 2 {
                        C::String(text)
                    } else {
                        C::Interpolation(text)
                    });
                    return Ok(None);
                }
                (_, current) => {
                    value.value = current;
                    wire.skip(wire_type, end)?;
                    return Ok(None);
                }
            };
            open(child)
        }
        (Node::Operation(operation), 1) => {
            varint_into(wire, wire_type, end, |v| operation.operator = v as i32)
        }
        (Node::Operation(operation), 2) => open(Node::CalculationValue(
            operation.left.take().map(|left| *left).unwrap_or_default(),
        )),
        (Node::Operation(operation), 3) => open(Node::CalculationValue(
            operation
                .right
                .take()
                .map(|right| *right)
                .unwrap_or_default(),
        )),
        // Unknown fields are skipped, as prost skips them.
        _ => {
            wire.skip(wire_type, end)?;
            Ok(None)
        }
    }
}

fn varint_into(
    wire: &mut Wire<'_>,
    wire_type: u8,
    end: usize,
    set: impl FnOnce(u64),
) -> Result<Option<Node>, DecodeError> {
    expect(wire_type, VARINT)?;
    set(wire.varint(end)?);
    Ok(None)
}

/// Reads a field of `Value`'s oneof that cannot nest, merging into what the
/// oneof held when it is the same field, as prost does.
fn leaf_value(
    field: u32,
    wire_type: u8,
    current: Option<value::Value>,
    wire: &mut Wire<'_>,
    end: usize,
) -> Result<Option<value::Value>, DecodeError> {
    use value::Value as V;
    fn merged<M: Message + Default>(
        current: Option<M>,
        wire_type: u8,
        wire: &mut Wire<'_>,
        end: usize,
    ) -> Result<M, DecodeError> {
        expect(wire_type, LENGTH_DELIMITED)?;
        let mut message = current.unwrap_or_default();
        message.merge(wire.bytes(end)?)?;
        Ok(message)
    }
    macro_rules! leaf {
        ($variant:ident) => {{
            let current = match current {
                Some(V::$variant(message)) => Some(message),
                _ => None,
            };
            V::$variant(merged(current, wire_type, wire, end)?)
        }};
    }
    Ok(Some(match field {
        1 => leaf!(String),
        2 => leaf!(Number),
        7 => {
            expect(wire_type, VARINT)?;
            V::Singleton(wire.varint(end)? as i32)
        }
        8 => leaf!(CompilerFunction),
        9 => leaf!(HostFunction),
        13 => leaf!(CompilerMixin),
        14 => leaf!(Color),
        15 => leaf!(CompilerModule),
        _ => {
            wire.skip(wire_type, end)?;
            return Ok(current);
        }
    }))
}

/// Puts a finished container into the field of its parent it was read from.
fn attach(parent: &mut Node, field: u32, child: Node) {
    use value::Value as V;
    match (parent, child) {
        (Node::Value(value), Node::List(list)) => value.value = Some(V::List(list)),
        (Node::Value(value), Node::Map(map)) => value.value = Some(V::Map(map)),
        (Node::Value(value), Node::ArgumentList(list)) => value.value = Some(V::ArgumentList(list)),
        (Node::Value(value), Node::Calculation(calculation)) => {
            value.value = Some(V::Calculation(calculation))
        }
        (Node::List(list), Node::Value(value)) => list.contents.push(value),
        (Node::Map(map), Node::Entry(entry)) => map.entries.push(entry),
        (Node::Entry(entry), Node::Value(value)) if field == 1 => entry.key = Some(value),
        (Node::Entry(entry), Node::Value(value)) => entry.value = Some(value),
        (Node::ArgumentList(list), Node::Value(value)) => list.contents.push(value),
        (Node::ArgumentList(list), Node::Keyword(key, value)) => {
            // A map entry without a value holds the default value, and a key
            // seen again replaces the entry, as prost decodes maps.
            list.keywords.insert(key, value.unwrap_or_default());
        }
        (Node::Keyword(_, slot), Node::Value(value)) => *slot = Some(value),
        (Node::Calculation(calculation), Node::CalculationValue(value)) => {
            calculation.arguments.push(value)
        }
        (Node::CalculationValue(value), Node::Operation(operation)) => {
            value.value = Some(calculation_value::Value::Operation(Box::new(operation)))
        }
        (Node::CalculationValue(value), Node::Calculation(calculation)) => {
            value.value = Some(calculation_value::Value::Calculation(calculation))
        }
        (Node::Operation(operation), Node::CalculationValue(value)) if field == 2 => {
            operation.left = Some(Box::new(value))
        }
        (Node::Operation(operation), Node::CalculationValue(value)) => {
            operation.right = Some(Box::new(value))
        }
        _ => unreachable!("field_of opens only children its parent holds"),
    }
}

// Drop takes a value's children out into a list on the heap, so that each
// value is dropped holding no children and no drop recurses.

impl Drop for Value {
    fn drop(&mut self) {
        use value::Value as V;
        let mut pending = match self.value.take() {
            Some(value @ (V::List(_) | V::Map(_) | V::ArgumentList(_))) => vec![value],
            // Leaves drop as they are; a calculation's own drop takes its
            // operands apart.
            _ => return,
        };
        while let Some(mut value) = pending.pop() {
            let mut take = |value: Value| {
                let mut value = value;
                if let Some(inner) = value.value.take() {
                    pending.push(inner);
                }
            };
            match &mut value {
                V::List(list) => list.contents.drain(..).for_each(&mut take),
                V::Map(map) => {
                    for entry in map.entries.drain(..) {
                        entry.key.into_iter().for_each(&mut take);
                        entry.value.into_iter().for_each(&mut take);
                    }
                }
                V::ArgumentList(list) => {
                    list.contents.drain(..).for_each(&mut take);
                    std::mem::take(&mut list.keywords)
                        .into_values()
                        .for_each(&mut take);
                }
                _ => {}
            }
        }
    }
}

impl Drop for CalculationValue {
    fn drop(&mut self) {
        use calculation_value::Value as C;
        let mut pending = match self.value.take() {
            Some(value @ (C::Operation(_) | C::Calculation(_))) => vec![value],
            _ => return,
        };
        while let Some(mut value) = pending.pop() {
            let mut take = |value: Option<CalculationValue>| {
                if let Some(inner) = value.and_then(|mut value| value.value.take()) {
                    pending.push(inner);
                }
            };
            match &mut value {
                C::Operation(operation) => {
                    take(operation.left.take().map(|left| *left));
                    take(operation.right.take().map(|right| *right));
                }
                C::Calculation(calculation) => {
                    calculation.arguments.drain(..).for_each(|a| take(Some(a)))
                }
                _ => {}
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::protocol::{
        outbound_message::{CompileResponse, LogEvent},
        CalculationOperator, ListSeparator,
    };
    use value::Value as V;

    fn string(text: &str) -> Value {
        Value {
            value: Some(V::String(value::String {
                text: text.into(),
                quoted: true,
            })),
        }
    }

    fn list(contents: Vec<Value>) -> Value {
        Value {
            value: Some(V::List(value::List {
                separator: ListSeparator::Slash as i32,
                has_brackets: true,
                contents,
            })),
        }
    }

    fn number(value: f64) -> value::Number {
        value::Number {
            value,
            numerators: vec!["px".into()],
            denominators: vec!["s".into()],
        }
    }

    fn operand(value: calculation_value::Value) -> Option<Box<CalculationValue>> {
        Some(Box::new(CalculationValue { value: Some(value) }))
    }

    /// One value of every kind, containers nested in each other.
    fn every_kind() -> Vec<Value> {
        let calculation = value::Calculation {
            name: "calc".into(),
            arguments: vec![CalculationValue {
                value: Some(calculation_value::Value::Operation(Box::new(
                    CalculationOperation {
                        operator: CalculationOperator::Minus as i32,
                        left: operand(calculation_value::Value::Number(number(1.5))),
                        right: operand(calculation_value::Value::Calculation(value::Calculation {
                            name: "max".into(),
                            arguments: vec![
                                CalculationValue {
                                    value: Some(calculation_value::Value::String("a".into())),
                                },
                                CalculationValue {
                                    value: Some(calculation_value::Value::Interpolation(
                                        "b".into(),
                                    )),
                                },
                            ],
                        })),
                    },
                ))),
            }],
        };
        let leaves = [
            V::Number(number(-2.0)),
            V::Singleton(2),
            V::CompilerFunction(value::CompilerFunction { id: 7 }),
            V::HostFunction(value::HostFunction {
                id: 8,
                signature: "f($a)".into(),
            }),
            V::CompilerMixin(value::CompilerMixin { id: 9 }),
            V::CompilerModule(value::CompilerModule { id: 10 }),
            V::Color(value::Color {
                space: "rgb".into(),
                channel1: Some(1.0),
                channel2: None,
                channel3: Some(0.0),
                alpha: Some(0.5),
            }),
            V::Calculation(calculation),
        ];
        let mut values: Vec<Value> = leaves
            .into_iter()
            .map(|value| Value { value: Some(value) })
            .collect();
        values.push(string("é"));
        let map = Value {
            value: Some(V::Map(value::Map {
                entries: vec![
                    Entry {
                        key: Some(string("k")),
                        value: Some(list(values.clone())),
                    },
                    Entry {
                        key: None,
                        value: Some(list(vec![])),
                    },
                ],
            })),
        };
        let arguments = Value {
            value: Some(V::ArgumentList(value::ArgumentList {
                id: 3,
                separator: ListSeparator::Comma as i32,
                contents: vec![map.clone(), Value::default()],
                keywords: [
                    ("a".to_string(), map.clone()),
                    ("b".to_string(), string("x")),
                ]
                .into_iter()
                .collect(),
            })),
        };
        values.extend([map, arguments, Value::default()]);
        values
    }

    fn function_call(arguments: Vec<Value>) -> OutboundMessage {
        OutboundMessage {
            message: Some(outbound_message::Message::FunctionCallRequest(
                FunctionCallRequest {
                    id: 42,
                    arguments,
                    identifier: Some(Identifier::Name("depth".into())),
                },
            )),
        }
    }

    /// What prost makes of `bytes`, and what [`decode_outbound`] does.
    fn both(bytes: Vec<u8>) -> (Result<OutboundMessage, ()>, Result<OutboundMessage, ()>) {
        let bytes = Bytes::from(bytes);
        (
            OutboundMessage::decode(bytes.clone()).map_err(drop),
            decode_outbound(bytes).map_err(drop),
        )
    }

    #[test]
    fn decodes_every_kind_of_value_as_prost_does() {
        let message = function_call(every_kind());
        let (prost, nested) = both(message.encode_to_vec());
        assert_eq!(nested, Ok(message));
        assert_eq!(nested, prost);
    }

    #[test]
    fn decodes_messages_without_values_as_prost_does() {
        for message in [
            outbound_message::Message::CompileResponse(CompileResponse {
                loaded_urls: vec!["file:///a.scss".into()],
                ..Default::default()
            }),
            outbound_message::Message::LogEvent(LogEvent {
                message: "careful".into(),
                ..Default::default()
            }),
        ] {
            let message = OutboundMessage {
                message: Some(message),
            };
            let (prost, nested) = both(message.encode_to_vec());
            assert_eq!(nested, Ok(message));
            assert_eq!(nested, prost);
        }
    }

    #[test]
    fn merges_fields_seen_again_and_skips_unknown_ones_as_prost_does() {
        let first = function_call(vec![list(vec![string("a")])]).encode_to_vec();
        let mut second = OutboundMessage {
            message: Some(outbound_message::Message::FunctionCallRequest(
                FunctionCallRequest {
                    id: 43,
                    arguments: vec![string("b")],
                    identifier: Some(Identifier::FunctionId(5)),
                },
            )),
        }
        .encode_to_vec();
        // An unknown field of each wire type, in the message and in a value.
        let unknown = [0xf8, 0x01, 0x05, 0xf9, 0x01, 0, 0, 0, 0, 0, 0, 0, 0];
        let mut bytes = first.clone();
        bytes.extend_from_slice(&unknown);
        bytes.append(&mut second);
        let (prost, nested) = both(bytes);
        let merged = nested.expect("decodes");
        assert_eq!(Ok(merged.clone()), prost);
        let Some(outbound_message::Message::FunctionCallRequest(request)) = merged.message else {
            panic!("not a function call: {merged:?}");
        };
        assert_eq!((request.id, request.arguments.len()), (43, 2));
        // Another field of the oneof after a function call replaces it.
        let mut bytes = first;
        bytes.extend(
            OutboundMessage {
                message: Some(outbound_message::Message::LogEvent(Default::default())),
            }
            .encode_to_vec(),
        );
        let (prost, nested) = both(bytes);
        assert_eq!(nested, prost);
        assert!(matches!(
            nested.unwrap().message,
            Some(outbound_message::Message::LogEvent(_))
        ));
    }

    #[test]
    fn refuses_what_prost_refuses() {
        let message = function_call(every_kind()).encode_to_vec();
        // Every truncation: most are errors; what prost accepts, so does this.
        for length in 0..message.len() {
            let (prost, nested) = both(message[..length].to_vec());
            assert_eq!(nested.is_ok(), prost.is_ok(), "cut at {length}");
            assert_eq!(nested, prost, "cut at {length}");
        }
        // A string that is not UTF-8, deep in a value.
        let bad = function_call(vec![list(vec![string("\u{1}")])]).encode_to_vec();
        let at = bad.iter().position(|&byte| byte == 1).unwrap();
        let mut bad = bad;
        bad[at] = 0xff;
        let (prost, nested) = both(bad);
        assert!(prost.is_err() && nested.is_err());
        // A known field of the wrong wire type.
        let (prost, nested) = both(vec![0x3a, 0x02, 0x08 | 2, 0x00]);
        assert!(prost.is_err() && nested.is_err());
    }

    /// Wraps `inner` (the bytes of one message) `depth` times, each level
    /// being `fields` (outermost first): a field number whose content is the
    /// next level. Built from the inside out in one buffer.
    fn nest(inner: Vec<u8>, fields: &[u32], depth: usize) -> Vec<u8> {
        let mut headers: Vec<Vec<u8>> = Vec::new();
        let mut length = inner.len();
        for _ in 0..depth {
            for &field in fields.iter().rev() {
                let mut header = Vec::new();
                prost::encoding::encode_key(
                    field,
                    prost::encoding::WireType::LengthDelimited,
                    &mut header,
                );
                prost::encoding::encode_varint(length as u64, &mut header);
                length += header.len();
                headers.push(header);
            }
        }
        let mut bytes: Vec<u8> = headers.into_iter().rev().flatten().collect();
        bytes.extend(inner);
        bytes
    }

    /// Counts the levels of `value`, following the first child of each
    /// container, without recursing.
    fn depth(value: &Value) -> usize {
        let mut depth = 0;
        let mut value = value;
        loop {
            let next = match &value.value {
                Some(V::List(list)) => list.contents.first(),
                Some(V::Map(map)) => map.entries.first().and_then(|e| e.value.as_ref()),
                Some(V::ArgumentList(list)) => list.keywords.values().next(),
                _ => return depth,
            };
            match next {
                Some(next) => {
                    depth += 1;
                    value = next;
                }
                None => return depth,
            }
        }
    }

    /// A hundred thousand levels of each container decode and drop on a
    /// thread with 128 KiB of stack (prost overflowed at a few hundred on a
    /// Ruby fiber).
    #[test]
    fn decodes_and_drops_deep_values_on_a_small_stack() {
        const DEPTH: usize = 100_000;
        let leaf = string("x").encode_to_vec();
        let cases: [(&[u32], &str); 3] = [
            (&[5, 3], "lists"),
            (&[6, 1, 2], "maps"),
            (&[10, 4, 2], "argument list keywords"),
        ];
        for (fields, name) in cases {
            let value = nest(leaf.clone(), fields, DEPTH);
            let mut message = Vec::new();
            prost::encoding::encode_key(
                5,
                prost::encoding::WireType::LengthDelimited,
                &mut message,
            );
            prost::encoding::encode_varint(value.len() as u64, &mut message);
            message.extend(value);
            let message = nest(message, &[FUNCTION_CALL_REQUEST], 1);
            let levels = std::thread::Builder::new()
                .stack_size(128 * 1024)
                .spawn(move || {
                    let decoded = decode_outbound(Bytes::from(message)).expect("decodes");
                    let Some(outbound_message::Message::FunctionCallRequest(request)) =
                        decoded.message
                    else {
                        panic!("not a function call");
                    };
                    depth(&request.arguments[0])
                })
                .unwrap()
                .join()
                .unwrap_or_else(|_| panic!("{name} overflowed"));
            assert_eq!(levels, DEPTH, "{name}");
        }
        // Calculations nest through operations (left) and calculations.
        let leaf = CalculationValue {
            value: Some(calculation_value::Value::String("x".into())),
        }
        .encode_to_vec();
        let calculation = nest(leaf, &[4, 2, 5, 2], DEPTH / 2);
        let mut value = Vec::new();
        prost::encoding::encode_key(2, prost::encoding::WireType::LengthDelimited, &mut value);
        prost::encoding::encode_varint(calculation.len() as u64, &mut value);
        value.extend(calculation);
        let value = nest(value, &[5, 12], 1);
        let message = nest(value, &[FUNCTION_CALL_REQUEST], 1);
        std::thread::Builder::new()
            .stack_size(128 * 1024)
            .spawn(move || {
                let decoded = decode_outbound(Bytes::from(message)).expect("decodes");
                assert!(decoded.message.is_some());
            })
            .unwrap()
            .join()
            .unwrap_or_else(|_| panic!("calculations overflowed"));
    }
}
