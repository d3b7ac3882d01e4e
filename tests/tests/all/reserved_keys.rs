//! The runtime's reserved tool-call keys and the codegen's refusal list are one list.

#[test]
fn runtime_and_codegen_reserve_the_same_keys() {
    let mut runtime: Vec<&str> = agent_contracts::contract::RESERVED_KEYS.to_vec();
    let mut codegen: Vec<&str> = agent_contracts_codegen::RESERVED_INPUT_KEYS.to_vec();
    runtime.sort_unstable();
    codegen.sort_unstable();
    assert_eq!(runtime, codegen);
}
