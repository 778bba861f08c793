//! Generates the protobuf types of the Embedded Sass Protocol from the vendored
//! `proto/embedded_sass.proto`. `protox` parses the schema in pure Rust, so
//! building the gem never needs `protoc` on the user's machine.

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let proto = "proto/embedded_sass.proto";
    println!("cargo:rerun-if-changed={proto}");
    let descriptors = protox::compile([proto], ["proto"])?;
    prost_build::Config::new()
        // Protobuf maps (argument list keywords) carry no order; a BTreeMap
        // at least gives Ruby the same order every time (sorted by name).
        .btree_map(["."])
        .compile_fds(descriptors)?;
    Ok(())
}
