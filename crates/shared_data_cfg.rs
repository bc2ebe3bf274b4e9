// Included by the build scripts of crates/sm and crates/fabric. Tells the
// integration tests whether the shared test data (`shared/data` beside the
// repository) is there: tests that need it are compiled as ignored without
// it, so a run without the data does not report them as passed. (Under
// `CI=true` a separate test fails when the data is missing.)

fn main() {
    println!("cargo::rustc-check-cfg=cfg(shared_data)");
    let manifest = std::path::PathBuf::from(std::env::var("CARGO_MANIFEST_DIR").expect("set by cargo"));
    let candidates = [manifest.join("../../../shared/data"), manifest.join("../../../../shared/data")];
    for c in &candidates {
        println!("cargo::rerun-if-changed={}", c.display());
    }
    if candidates.iter().any(|c| c.is_dir()) {
        println!("cargo::rustc-cfg=shared_data");
    }
}
