//! Packet framing of the Embedded Sass Protocol over a byte stream.
//!
//! Every packet is `varint(length) ‖ varint(compilation id) ‖ protobuf`,
//! where `length` counts the compilation id and the protobuf together. This
//! module owns both directions: [`encode_packet`] builds one packet in one
//! buffer (so the writer can write it whole), and [`PacketDecoder`] is a
//! `Head`/`Data(n)` state machine that accepts bytes in any split — a packet
//! across many reads, many packets in one read — and rejects malformed input
//! with a [`FramingError`], never a panic.

use std::fmt;

use bytes::{Buf, Bytes, BytesMut};

/// The largest packet the decoder accepts by default: protobuf messages cannot
/// exceed 2 GiB, so a longer length can only be garbage.
pub const DEFAULT_MAX_PACKET_LEN: usize = i32::MAX as usize;

/// The most the decoder reserves ahead of the bytes actually received.
const MAX_UPFRONT_RESERVE: usize = 16 << 20;

/// The longest varint encoding of a `u64`.
const MAX_VARINT_LEN_64: usize = 10;
/// The longest varint encoding of a `u32`.
const MAX_VARINT_LEN_32: usize = 5;

/// One decoded packet: the compilation it belongs to and its protobuf bytes.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Packet {
    /// The compilation id the packet was sent under.
    pub compilation_id: u32,
    /// The encoded protobuf message (possibly empty).
    pub payload: Bytes,
}

/// Why a byte stream is not a valid sequence of packets.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum FramingError {
    /// The length prefix is not a valid varint (too many bytes or over 64 bits).
    MalformedLength,
    /// The length prefix says the packet is empty, so it has no compilation id.
    EmptyPacket,
    /// The length is larger than the decoder's limit.
    PacketTooLong {
        /// The length the stream announced.
        length: u64,
        /// The decoder's limit.
        max: usize,
    },
    /// The compilation id is not a valid varint of at most 32 bits, or runs past
    /// the end of the packet.
    MalformedCompilationId,
    /// The stream ended in the middle of a packet.
    TruncatedPacket {
        /// How many bytes of the unfinished packet were received.
        received: usize,
    },
}

impl fmt::Display for FramingError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::MalformedLength => f.write_str("malformed packet length varint"),
            Self::EmptyPacket => f.write_str("packet of length 0 has no compilation id"),
            Self::PacketTooLong { length, max } => {
                write!(f, "packet length {length} exceeds the limit of {max} bytes")
            }
            Self::MalformedCompilationId => f.write_str("malformed compilation id varint"),
            Self::TruncatedPacket { received } => {
                write!(f, "stream ended inside a packet after {received} bytes")
            }
        }
    }
}

impl std::error::Error for FramingError {}

/// Appends the varint encoding of `value` to `buf`.
pub fn encode_varint(mut value: u64, buf: &mut Vec<u8>) {
    while value >= 0x80 {
        buf.push((value as u8) | 0x80);
        value >>= 7;
    }
    buf.push(value as u8);
}

/// The number of bytes [`encode_varint`] writes for `value`.
pub fn varint_len(value: u64) -> usize {
    // Each byte carries 7 bits; zero still takes one byte.
    let bits = 64 - (value | 1).leading_zeros() as usize;
    bits.div_ceil(7)
}

/// Result of reading a varint from the front of a buffer.
enum Varint {
    /// The value and the number of bytes it took.
    Complete(u64, usize),
    /// The buffer ends before the varint does.
    Incomplete,
    /// Longer than `max_len` bytes, or more than 64 bits.
    Malformed,
}

fn read_varint(buf: &[u8], max_len: usize) -> Varint {
    let mut value: u64 = 0;
    for (i, &byte) in buf.iter().enumerate() {
        if i >= max_len {
            return Varint::Malformed;
        }
        let bits = u64::from(byte & 0x7f);
        // The tenth byte of a u64 varint may only carry its lowest bit.
        if i == MAX_VARINT_LEN_64 - 1 && bits > 1 {
            return Varint::Malformed;
        }
        value |= bits << (7 * i);
        if byte & 0x80 == 0 {
            return Varint::Complete(value, i + 1);
        }
    }
    if buf.len() >= max_len {
        Varint::Malformed
    } else {
        Varint::Incomplete
    }
}

/// Encodes one packet: length, compilation id and message, in one buffer.
pub fn encode_packet<M: prost::Message>(compilation_id: u32, message: &M) -> Vec<u8> {
    let body_len = message.encoded_len();
    let length = varint_len(u64::from(compilation_id)) + body_len;
    let mut buf = Vec::with_capacity(varint_len(length as u64) + length);
    encode_varint(length as u64, &mut buf);
    encode_varint(u64::from(compilation_id), &mut buf);
    message
        .encode(&mut buf)
        .expect("a Vec grows to fit any message");
    buf
}

/// Encodes a packet whose message is already encoded (`body`).
pub fn frame(compilation_id: u32, body: &[u8]) -> Vec<u8> {
    let length = varint_len(u64::from(compilation_id)) + body.len();
    let mut buf = Vec::with_capacity(varint_len(length as u64) + length);
    encode_varint(length as u64, &mut buf);
    encode_varint(u64::from(compilation_id), &mut buf);
    buf.extend_from_slice(body);
    buf
}

/// The encoded message of a whole packet (what follows its length and
/// compilation id), or `None` if `packet` is not one.
pub fn packet_body(packet: &[u8]) -> Option<&[u8]> {
    let Varint::Complete(length, length_len) = read_varint(packet, MAX_VARINT_LEN_64) else {
        return None;
    };
    let rest = &packet[length_len..];
    if rest.len() as u64 != length {
        return None;
    }
    let Varint::Complete(_, id_len) = read_varint(rest, MAX_VARINT_LEN_32) else {
        return None;
    };
    Some(&rest[id_len..])
}

/// Where the decoder is within the current packet.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum DecodeState {
    /// Waiting for (the rest of) a length prefix.
    Head,
    /// The length prefix was read; waiting for this many bytes of packet.
    Data(usize),
}

/// Incremental decoder of a packet stream. Feed it bytes as they arrive in a
/// [`BytesMut`] and call [`decode`](Self::decode) until it returns `Ok(None)`.
#[derive(Debug)]
pub struct PacketDecoder {
    state: DecodeState,
    max_packet_len: usize,
}

impl Default for PacketDecoder {
    fn default() -> Self {
        Self::new(DEFAULT_MAX_PACKET_LEN)
    }
}

impl PacketDecoder {
    /// A decoder that rejects packets longer than `max_packet_len` bytes.
    pub fn new(max_packet_len: usize) -> Self {
        Self {
            state: DecodeState::Head,
            max_packet_len,
        }
    }

    /// Takes the next complete packet off the front of `buf`, or returns
    /// `Ok(None)` when `buf` does not hold one yet. After an error the stream is
    /// unusable: the caller must close it.
    pub fn decode(&mut self, buf: &mut BytesMut) -> Result<Option<Packet>, FramingError> {
        if self.state == DecodeState::Head {
            let length = match read_varint(buf, MAX_VARINT_LEN_64) {
                Varint::Incomplete => return Ok(None),
                Varint::Malformed => return Err(FramingError::MalformedLength),
                Varint::Complete(length, used) => {
                    buf.advance(used);
                    length
                }
            };
            if length == 0 {
                return Err(FramingError::EmptyPacket);
            }
            if length > self.max_packet_len as u64 {
                return Err(FramingError::PacketTooLong {
                    length,
                    max: self.max_packet_len,
                });
            }
            let length = length as usize;
            // Reserve room for the packet so a large one is read without
            // repeated reallocation, but never trust a length so much that
            // garbage could make us allocate gigabytes up front.
            buf.reserve(length.min(MAX_UPFRONT_RESERVE).saturating_sub(buf.len()));
            self.state = DecodeState::Data(length);
        }

        let DecodeState::Data(length) = self.state else {
            unreachable!("the head state was handled above");
        };
        if buf.len() < length {
            return Ok(None);
        }
        let mut packet = buf.split_to(length).freeze();
        self.state = DecodeState::Head;
        let compilation_id = match read_varint(&packet, MAX_VARINT_LEN_32) {
            Varint::Complete(id, used) if id <= u64::from(u32::MAX) => {
                packet.advance(used);
                id as u32
            }
            _ => return Err(FramingError::MalformedCompilationId),
        };
        Ok(Some(Packet {
            compilation_id,
            payload: packet,
        }))
    }

    /// Whether a packet has begun and not ended: its length was read, or
    /// part of it is in `buf`.
    pub fn mid_packet(&self, buf: &BytesMut) -> bool {
        self.state != DecodeState::Head || !buf.is_empty()
    }

    /// Checks that the stream ended on a packet boundary: call this at end of
    /// stream with whatever bytes remain unread.
    pub fn finish(&self, remaining: &BytesMut) -> Result<(), FramingError> {
        match self.state {
            DecodeState::Head if remaining.is_empty() => Ok(()),
            DecodeState::Head => Err(FramingError::TruncatedPacket {
                received: remaining.len(),
            }),
            DecodeState::Data(_) => Err(FramingError::TruncatedPacket {
                received: remaining.len(),
            }),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A raw packet with arbitrary payload bytes (not necessarily protobuf).
    fn raw_packet(compilation_id: u32, payload: &[u8]) -> Vec<u8> {
        let mut id = Vec::new();
        encode_varint(u64::from(compilation_id), &mut id);
        let mut buf = Vec::new();
        encode_varint((id.len() + payload.len()) as u64, &mut buf);
        buf.extend_from_slice(&id);
        buf.extend_from_slice(payload);
        buf
    }

    /// Feeds `stream` to a fresh decoder in chunks of `chunk` bytes and
    /// collects every packet, or the first error.
    fn decode_in_chunks(stream: &[u8], chunk: usize) -> Result<Vec<Packet>, FramingError> {
        let mut decoder = PacketDecoder::default();
        let mut buf = BytesMut::new();
        let mut packets = Vec::new();
        for piece in stream.chunks(chunk.max(1)) {
            buf.extend_from_slice(piece);
            while let Some(packet) = decoder.decode(&mut buf)? {
                packets.push(packet);
            }
        }
        decoder.finish(&buf)?;
        Ok(packets)
    }

    #[test]
    fn a_framed_body_is_read_back_and_reframed() {
        let message = crate::protocol::InboundMessage {
            message: Some(crate::protocol::inbound_message::Message::VersionRequest(
                crate::protocol::inbound_message::VersionRequest { id: 9 },
            )),
        };
        let packet = encode_packet(300, &message);
        let body = packet_body(&packet).expect("a whole packet");
        assert_eq!(body, prost::Message::encode_to_vec(&message).as_slice());
        let again = frame(7, body);
        assert_eq!(again, encode_packet(7, &message));
        assert_eq!(packet_body(&again), Some(body));
        // Not a whole packet.
        assert_eq!(packet_body(&packet[..packet.len() - 1]), None);
        assert_eq!(packet_body(&[]), None);
    }

    /// As the compiler writes a packet: its length, then its body, apart.
    #[test]
    fn a_packet_is_mid_way_from_its_first_byte_to_its_last() {
        let packet = raw_packet(5, b"a {\n  b: c;\n}");
        let mut decoder = PacketDecoder::default();
        let mut buf = BytesMut::new();
        assert!(!decoder.mid_packet(&buf));
        buf.extend_from_slice(&packet[..1]);
        assert_eq!(decoder.decode(&mut buf).unwrap(), None);
        assert!(buf.is_empty(), "the length was taken off the buffer");
        assert!(decoder.mid_packet(&buf), "the length alone");
        buf.extend_from_slice(&packet[1..3]);
        assert_eq!(decoder.decode(&mut buf).unwrap(), None);
        assert!(decoder.mid_packet(&buf), "part of the body");
        buf.extend_from_slice(&packet[3..]);
        assert!(decoder.decode(&mut buf).unwrap().is_some());
        assert!(!decoder.mid_packet(&buf), "the whole packet");
    }

    #[test]
    fn varint_round_trips_and_lengths() {
        let cases: &[(u64, &[u8])] = &[
            (0, &[0x00]),
            (1, &[0x01]),
            (127, &[0x7f]),
            (128, &[0x80, 0x01]),
            (300, &[0xac, 0x02]),
            (16_383, &[0xff, 0x7f]),
            (16_384, &[0x80, 0x80, 0x01]),
            (u64::from(u32::MAX), &[0xff, 0xff, 0xff, 0xff, 0x0f]),
            (
                u64::MAX,
                &[0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01],
            ),
        ];
        for &(value, encoded) in cases {
            let mut buf = Vec::new();
            encode_varint(value, &mut buf);
            assert_eq!(buf, encoded, "encoding {value}");
            assert_eq!(varint_len(value), encoded.len(), "length of {value}");
            match read_varint(&buf, MAX_VARINT_LEN_64) {
                Varint::Complete(decoded, used) => {
                    assert_eq!((decoded, used), (value, encoded.len()));
                }
                _ => panic!("{value} did not decode"),
            }
        }
    }

    #[test]
    fn table_of_streams() {
        let big = vec![0xabu8; 70_000];
        let two_fifty_seven = vec![7u8; 257];
        /// (name, stream, expected packets as (compilation id, payload))
        type Case<'a> = (&'a str, Vec<u8>, Vec<(u32, Vec<u8>)>);
        let cases: Vec<Case> = vec![
            ("no bytes at all", vec![], vec![]),
            ("empty payload", raw_packet(1, &[]), vec![(1, vec![])]),
            (
                "compilation id 0",
                raw_packet(0, b"v"),
                vec![(0, b"v".to_vec())],
            ),
            (
                "largest compilation id",
                raw_packet(u32::MAX, b"e"),
                vec![(u32::MAX, b"e".to_vec())],
            ),
            (
                "length over 256",
                raw_packet(3, &two_fifty_seven),
                vec![(3, two_fifty_seven.clone())],
            ),
            (
                "length over 65536",
                raw_packet(4, &big),
                vec![(4, big.clone())],
            ),
            (
                "many packets in one read",
                [
                    raw_packet(1, b"a"),
                    raw_packet(2, b""),
                    raw_packet(300, b"ccc"),
                ]
                .concat(),
                vec![(1, b"a".to_vec()), (2, vec![]), (300, b"ccc".to_vec())],
            ),
        ];
        for (name, stream, expected) in cases {
            let expected: Vec<Packet> = expected
                .into_iter()
                .map(|(compilation_id, payload)| Packet {
                    compilation_id,
                    payload: Bytes::from(payload),
                })
                .collect();
            // Every split: one byte at a time, odd sizes, and the whole stream.
            for chunk in [1, 2, 3, 7, 256, 4096, stream.len().max(1)] {
                let packets = decode_in_chunks(&stream, chunk)
                    .unwrap_or_else(|e| panic!("{name} in chunks of {chunk}: {e}"));
                assert_eq!(packets, expected, "{name} in chunks of {chunk}");
            }
        }
    }

    #[test]
    fn table_of_malformed_streams() {
        let cases: Vec<(&str, Vec<u8>, FramingError)> = vec![
            ("length 0", vec![0x00], FramingError::EmptyPacket),
            (
                "length varint longer than 10 bytes",
                vec![0x80; 11],
                FramingError::MalformedLength,
            ),
            (
                "length varint over 64 bits",
                vec![0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x7f],
                FramingError::MalformedLength,
            ),
            (
                "length over the limit",
                {
                    let mut v = Vec::new();
                    encode_varint(DEFAULT_MAX_PACKET_LEN as u64 + 1, &mut v);
                    v
                },
                FramingError::PacketTooLong {
                    length: DEFAULT_MAX_PACKET_LEN as u64 + 1,
                    max: DEFAULT_MAX_PACKET_LEN,
                },
            ),
            (
                "compilation id over 32 bits",
                vec![6, 0xff, 0xff, 0xff, 0xff, 0x1f, 0x00],
                FramingError::MalformedCompilationId,
            ),
            (
                "compilation id runs past the packet",
                vec![1, 0x80, 0x01],
                FramingError::MalformedCompilationId,
            ),
            (
                "stream ends inside the payload",
                vec![5, 1, b'a'],
                FramingError::TruncatedPacket { received: 2 },
            ),
            (
                "stream ends inside the length",
                vec![0x80],
                FramingError::TruncatedPacket { received: 1 },
            ),
        ];
        for (name, stream, expected) in cases {
            for chunk in [1, 3, stream.len().max(1)] {
                let error = decode_in_chunks(&stream, chunk)
                    .expect_err(&format!("{name} in chunks of {chunk} decoded"));
                assert_eq!(error, expected, "{name} in chunks of {chunk}");
            }
        }
    }

    #[test]
    fn small_limit_is_enforced_before_buffering() {
        let mut decoder = PacketDecoder::new(16);
        let mut buf = BytesMut::from(&raw_packet(1, &[0u8; 16])[..2]);
        assert_eq!(
            decoder.decode(&mut buf),
            Err(FramingError::PacketTooLong {
                length: 17,
                max: 16
            })
        );
    }

    #[test]
    fn encode_packet_matches_the_wire_format() {
        use crate::protocol::{inbound_message, InboundMessage};
        let message = InboundMessage {
            message: Some(inbound_message::Message::VersionRequest(
                inbound_message::VersionRequest { id: 300 },
            )),
        };
        let encoded = encode_packet(0, &message);
        let packets = decode_in_chunks(&encoded, 1).unwrap();
        assert_eq!(packets.len(), 1);
        assert_eq!(packets[0].compilation_id, 0);
        let decoded: InboundMessage = prost::Message::decode(packets[0].payload.clone()).unwrap();
        assert_eq!(decoded, message);

        // A compilation id that takes several bytes is counted in the length.
        let encoded = encode_packet(u32::MAX, &message);
        let packets = decode_in_chunks(&encoded, 2).unwrap();
        assert_eq!(packets[0].compilation_id, u32::MAX);
    }
}
