//! Generates the agents of `../schemas` into `OUT_DIR/agents.rs`.

fn main() {
    if let Err(e) =
        agent_contracts_codegen::Builder::new("../schemas").write_to_out_dir("agents.rs")
    {
        eprintln!("{e}");
        std::process::exit(1);
    }
}
