//! The committed protocol code, `src/protocol/embedded_sass.rs`, is what
//! prost-build generates from the vendored `proto/embedded_sass.proto` (parsed
//! by protox, in pure Rust): regenerated here and compared, so that the schema
//! and the code the host is built with cannot drift apart. After changing the
//! schema, `SASS_EMBEDDED_REGENERATE=1 cargo test -p sass-embedded-core --test
//! protocol_schema` rewrites the file.

use std::fs;
use std::path::Path;

#[test]
fn the_committed_protocol_code_is_generated_from_the_vendored_schema() {
    let package = Path::new(env!("CARGO_MANIFEST_DIR"));
    let out = std::env::temp_dir().join(format!("sass-embedded-protocol-{}", std::process::id()));
    fs::create_dir_all(&out).unwrap();
    let descriptors = protox::compile(["embedded_sass.proto"], [package.join("proto")]).unwrap();
    prost_build::Config::new()
        // Protobuf maps (argument list keywords) carry no order; a BTreeMap
        // at least gives Ruby the same order every time (sorted by name).
        .btree_map(["."])
        .out_dir(&out)
        .compile_fds(descriptors)
        .unwrap();
    let generated = fs::read_to_string(out.join("sass.embedded_protocol.rs")).unwrap();
    fs::remove_dir_all(&out).unwrap();

    let committed = package.join("src/protocol/embedded_sass.rs");
    if std::env::var_os("SASS_EMBEDDED_REGENERATE").is_some() {
        fs::write(&committed, &generated).unwrap();
    }
    let current = fs::read_to_string(&committed).unwrap();
    assert!(
        current == generated,
        "{} is not what proto/embedded_sass.proto generates: run \
         SASS_EMBEDDED_REGENERATE=1 cargo test -p sass-embedded-core --test protocol_schema",
        committed.display()
    );
}
